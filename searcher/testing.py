"""Conformance checks every generator and every target must pass (tests/test_*_conformance.py).

Each check takes a generator and raises AssertionError with a message on failure, in the
manner of scikit-learn's `check_estimator`. Plug-in authors can run `check_generator(gen)`.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable

import numpy as np
import pytest

from generators.base import Batch, Generator
from searcher.errors import ParameterError
from searcher.space import Categorical

__all__ = ["GENERATOR_CHECKS", "TARGET_CHECKS", "check_generator", "check_target"]


def check_same_seed_same_pixels(gen: Generator) -> None:
    params = gen.space.sample(3, seed=1)
    a, b = gen.generate(params, seed=7), gen.generate(params, seed=7)
    assert np.array_equal(a.images, b.images), "the same params and seed gave different pixels"
    assert a.truth.equals(b.truth), "the same params and seed gave different truth"


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
            if isinstance(a[k], (str, int)):
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


# --------------------------------------------------------------------------- targets


def _probe_images() -> np.ndarray:
    """Four small renders plus a flat grey frame: faces and a non-face."""
    import generators

    gen = generators.load("faces", resolution=128)
    faces = gen.generate([{"identity": i, "skin_tone": 1.0 + 1.5 * i} for i in range(4)]).images
    return np.concatenate([faces, np.full((1, 128, 128, 3), 128, np.uint8)])


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is not None and b is not None and np.allclose(a, b, atol=1e-5)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    return a == b


def check_target_deterministic(target) -> None:
    images = _probe_images()
    a, b = target.predict(images), target.predict(images)
    for field in ("label", "score", "embedding", "error"):
        for x, y in zip(getattr(a, field), getattr(b, field)):
            assert _same(x, y), f"predict gave a different {field} on the same images: {x!r} vs {y!r}"


def check_target_batch_equals_singles(target) -> None:
    images = _probe_images()
    whole = target.predict(images)
    assert len(whole) == len(images), f"{len(whole)} predictions for {len(images)} images"
    for i in range(len(images)):
        one = target.predict(images[i : i + 1])
        for field in ("label", "score", "embedding", "error"):
            assert _same(getattr(whole, field)[i], getattr(one, field)[0]), f"image {i}: {field} differs alone and in a batch"


def check_target_rejects_bad_images(target) -> None:
    good = _probe_images()[:1]
    bad = {
        "float": good.astype(np.float32),
        "one image without the batch axis": good[0],
        "four channels": np.concatenate([good, good[..., :1]], axis=-1),
        "grey": good[..., 0],
    }
    for images in bad.values():
        with pytest.raises(ValueError, match="uint8|N x H x W x 3"):
            target.predict(images)


def check_target_declares_its_task(target) -> None:
    from targets.base import TASKS

    assert target.task in TASKS, f"task {target.task!r} is not one of {TASKS}"
    pred = target.predict(_probe_images())
    if target.task == "classify":
        assert list(target.labels), "a classify target declares its labels"
        assert all(lab in target.labels for lab, err in zip(pred.label, pred.error) if err is None)
    if target.task == "verify":
        embeddings = [e for e in pred.embedding if e is not None]
        assert embeddings and float(target.threshold) > 0
        assert target.distance(embeddings[0], embeddings[0]) == 0.0


TARGET_CHECKS: list[Callable] = [
    check_target_deterministic,
    check_target_batch_equals_singles,
    check_target_rejects_bad_images,
    check_target_declares_its_task,
]


def check_target(target) -> None:
    """Runs every target conformance check on `target`."""
    for check in TARGET_CHECKS:
        check(target)
