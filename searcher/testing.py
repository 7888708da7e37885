"""Conformance checks every generator must pass (run by tests/test_generator_conformance.py).

Each check takes a generator and raises AssertionError with a message on failure, in the
manner of scikit-learn's `check_estimator`. Plug-in authors can run `check_generator(gen)`.
"""

from __future__ import annotations

import copy
import math
import pickle
from typing import Callable

import numpy as np
import pytest

from generators.base import Batch, Generator
from searcher.errors import ParameterError
from searcher.space import Categorical

__all__ = ["GENERATOR_CHECKS", "check_generator"]


def check_same_seed_same_pixels(gen: Generator) -> None:
    params = gen.space.sample(3, seed=1)
    a, b = gen.generate(params, seed=7), gen.generate(params, seed=7)
    assert np.array_equal(a.images, b.images), "the same params and seed gave different pixels"
    a.truth.equals(b.truth) or pytest.fail("the same params and seed gave different truth")


def check_batch_equals_singles(gen: Generator) -> None:
    params = gen.space.sample(5, seed=2)
    whole = gen.generate(params, seed=3)
    for i, p in enumerate(params):
        one = gen.generate([p], seed=3)
        assert np.array_equal(whole.images[i], one.images[0]), f"image {i} of a batch differs from the same params rendered alone"
        assert whole.truth.iloc[[i]].reset_index(drop=True).equals(one.truth), f"truth row {i} differs when rendered alone"


def check_shapes_and_dtype(gen: Generator) -> None:
    batch = gen.generate(gen.space.sample(4, seed=4), seed=0)
    assert isinstance(batch, Batch)
    assert batch.images.dtype == np.uint8 and batch.images.ndim == 4 and batch.images.shape[0] == 4
    assert batch.images.shape[1] == batch.images.shape[2] and batch.images.shape[3] == 3
    assert len(batch.truth) == 4
    assert batch.images.std() > 5, "images are (nearly) constant"


def check_truth_matches_space(gen: Generator) -> None:
    batch = gen.generate(gen.space.sample(4, seed=5), seed=0)
    named = [p.name for p in gen.space.params]
    missing = [n for n in named if n not in batch.truth.columns]
    assert not missing, f"truth lacks the space's parameters {missing}"
    assert len(batch.truth.columns) > 0 and not batch.truth.isna().any().any(), "truth has no columns or has NaN"


def check_bad_params_raise(gen: Generator) -> None:
    space = gen.space
    with pytest.raises(ParameterError, match="Unknown parameter 'no_such_param'"):
        gen.generate({"no_such_param": 1.0})
    for p in space.params:
        if isinstance(p, Categorical):
            with pytest.raises(ParameterError, match=rf"'{p.name}'.*one of"):
                gen.generate({p.name: "no-such-choice"})
        else:
            with pytest.raises(ParameterError, match=rf"'{p.name}'.*\[{p.low:g}, {p.high:g}\]"):
                gen.generate({p.name: p.high + 1})
            with pytest.raises(ParameterError, match=rf"'{p.name}'.*nan"):
                gen.generate({p.name: math.nan})
    if space.latent is not None:
        first = space.latent.names[0]
        with pytest.raises(ParameterError, match=rf"'{first}'"):
            gen.generate({first: space.latent.bound + 1})
        with pytest.raises(ParameterError, match=rf"'{first}'.*nan"):
            gen.generate({first: math.nan})


def check_input_not_mutated(gen: Generator) -> None:
    params = gen.space.sample(2, seed=6)
    before = copy.deepcopy(params)
    gen.generate(params)
    assert params == before, "generate mutated its input"


def check_pickles(gen: Generator) -> None:
    params = gen.space.sample(2, seed=8)
    clone = pickle.loads(pickle.dumps(gen))
    assert np.array_equal(clone.generate(params).images, gen.generate(params).images), "a pickled copy renders differently"


def check_unit_cube_round_trip(gen: Generator) -> None:
    params = gen.space.validate(gen.space.sample(6, seed=9))
    X = gen.space.to_unit(params)
    assert X.shape == (6, gen.space.dim) and X.min() >= 0 and X.max() <= 1
    again = gen.space.from_unit(X)
    for a, b in zip(params, again):
        for k in a:
            if isinstance(a[k], str) or isinstance(a[k], int):
                assert a[k] == b[k], f"{k}: {a[k]!r} != {b[k]!r} after the unit-cube round trip"
            else:
                assert math.isclose(a[k], b[k], rel_tol=1e-9, abs_tol=1e-9), f"{k}: {a[k]!r} != {b[k]!r}"


GENERATOR_CHECKS: list[Callable[[Generator], None]] = [
    check_same_seed_same_pixels,
    check_batch_equals_singles,
    check_shapes_and_dtype,
    check_truth_matches_space,
    check_bad_params_raise,
    check_input_not_mutated,
    check_pickles,
    check_unit_cube_round_trip,
]


def check_generator(gen: Generator) -> None:
    """Runs every conformance check on `gen`."""
    for check in GENERATOR_CHECKS:
        check(gen)
