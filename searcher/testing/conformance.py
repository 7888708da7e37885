"""Conformance checks every generator, target and strategy must pass (tests/test_conformance.py).

Each check takes a plug-in and raises AssertionError with a message on failure, in the manner of
scikit-learn's `check_estimator`. Plug-in authors can run `check_generator(gen)`,
`check_target(target)` or `check_strategy(factory)` on their own plug-ins; nothing here needs
pytest.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from generators.base import Batch, Generator
from searcher.errors import ParameterError, SearcherError
from searcher.space import Categorical, Continuous, Integer, Space

__all__ = ["GENERATOR_CHECKS", "STRATEGY_CHECKS", "TARGET_CHECKS", "check_generator", "check_strategy", "check_target"]


@contextmanager
def _raises(kind: type[BaseException], match: str) -> Iterator[None]:
    """Asserts that the block raises `kind` with a message matching the regex `match`."""
    try:
        yield
    except kind as exc:
        assert re.search(match, str(exc)), f"{kind.__name__} raised, but its message {str(exc)!r} does not match {match!r}"
    else:
        raise AssertionError(f"{kind.__name__} was not raised (expected a message matching {match!r})")

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
    with _raises(ParameterError, match="Unknown parameter 'no_such_param'"):
        gen.generate({"no_such_param": 1.0})
    for p in space.params:
        if isinstance(p, Categorical):
            with _raises(ParameterError, match=rf"'{p.name}'.*one of"):
                gen.generate({p.name: "no-such-choice"})
        else:
            with _raises(ParameterError, match=rf"'{p.name}'.*\[{p.low:g}, {p.high:g}\]"):
                gen.generate({p.name: p.high + 1})
            with _raises(ParameterError, match=rf"'{p.name}'.*nan"):
                gen.generate({p.name: math.nan})
            with _raises(ParameterError, match=rf"'{p.name}'.*inf"):
                gen.generate({p.name: math.inf})
    if space.latent is not None:
        first = space.latent.names[0]
        with _raises(ParameterError, match=rf"'{first}'"):
            gen.generate({first: space.latent.bound + 1})
        with _raises(ParameterError, match=rf"'{first}'.*nan"):
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
        with _raises(ValueError, match="uint8|N x H x W x 3"):
            target.predict(images)


def check_target_declares_its_task(target) -> None:
    from targets.base import TASKS

    assert target.task in TASKS, f"task {target.task!r} is not one of {TASKS}"
    pred = target.predict(_probe_images())
    if target.task == "classify":
        assert list(target.labels), "a classify target declares its labels"
        truth = getattr(target, "truth", "undeclared")
        assert truth is None or (len(truth) == 2 and isinstance(truth[0], str)), \
            f"a classify target declares `truth` as None or (column, cut); got {truth!r}"
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


# --------------------------------------------------------------------------- strategies

#: A small mixed space every strategy is checked on: continuous, integer and categorical columns.
PROBE_SPACE = Space([Continuous("a", 0.0, 1.0), Continuous("b", -5.0, 5.0), Integer("k", 0, 4),
                     Categorical("c", ("x", "y", "z"))])


def _probe_loss(X: np.ndarray) -> np.ndarray:
    """A deterministic landscape: failures in one corner of the continuous columns, and NaN (no
    answer) on a few points, which strategies must skip."""
    loss = ((X[:, 0] > 0.6) & (X[:, 1] > 0.5)).astype(float)
    loss[X[:, 0] < 0.05] = np.nan
    return loss


def _drive(strategy: Any, steps: int, n: int = 4) -> list[np.ndarray]:
    asked = []
    for step in range(steps):
        X = strategy.ask(n, step)
        asked.append(X)
        strategy.tell(X, _probe_loss(X))
    return asked


def check_strategy_proposes_cube_points(factory: Callable[..., Any]) -> None:
    strategy = factory(PROBE_SPACE, seed=0)
    cube = PROBE_SPACE.cube
    for X in _drive(strategy, 6):
        assert X.shape == (4, PROBE_SPACE.dim), f"ask(4) gave shape {X.shape}, not (4, {PROBE_SPACE.dim})"
        assert np.isfinite(X).all() and X.min() >= 0 and X.max() <= 1, "a proposal left the unit cube"
        assert np.allclose(cube.snap(X), X), "a proposal is not a proposable point (one-hot vertex, integer cell centre)"


def check_strategy_same_seed_same_points(factory: Callable[..., Any]) -> None:
    a, b = _drive(factory(PROBE_SPACE, seed=3), 6), _drive(factory(PROBE_SPACE, seed=3), 6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)), "the same seed and history gave different proposals"


def check_strategy_resumes_exactly(factory: Callable[..., Any]) -> None:
    """A strategy rebuilt from the told history and the last `state()` asks what the original asks."""
    original = factory(PROBE_SPACE, seed=1)
    asked = _drive(original, 5)
    state = json.loads(json.dumps(original.state()))  # the store keeps it as JSON
    rebuilt = factory(PROBE_SPACE, seed=1)
    for X in asked:
        rebuilt.tell(X, _probe_loss(X))
    rebuilt.restore(state)
    assert np.array_equal(original.ask(4, 5), rebuilt.ask(4, 5)), "a strategy rebuilt from its history and state asked other points"


def check_strategy_resumes_exactly_with_points_pending(factory: Callable[..., Any]) -> None:
    """A strategy whose `overlaps` is True, asked a batch while the one before is pending, asks none
    of the pending points; rebuilt from the history and the state saved once the batch before was
    told, it asks what the original asks, and again once both are told the pending batch."""
    original = factory(PROBE_SPACE, seed=1)
    if not getattr(original, "overlaps", False):
        return
    asked = _drive(original, 5)
    pending = original.ask(4, 5)
    ahead = original.ask(4, 6, pending=pending)  # asked while `pending` is evaluated
    assert not {x.tobytes() for x in ahead} & {x.tobytes() for x in pending}, "a point pending was asked again"
    original.tell(pending, _probe_loss(pending))
    state = json.loads(json.dumps(original.state()))
    rebuilt = factory(PROBE_SPACE, seed=1)
    for X in [*asked, pending]:
        rebuilt.tell(X, _probe_loss(X))
    rebuilt.restore(state)
    nxt = original.ask(4, 7, pending=ahead)
    assert np.array_equal(nxt, rebuilt.ask(4, 7, pending=ahead)), "a strategy rebuilt with points pending asked other points"
    for strategy in (original, rebuilt):
        strategy.tell(ahead, _probe_loss(ahead))
    assert json.dumps(original.state(), sort_keys=True) == json.dumps(rebuilt.state(), sort_keys=True), \
        "a strategy rebuilt with points pending kept another state once they were told"
    assert np.array_equal(original.ask(4, 8, pending=nxt), rebuilt.ask(4, 8, pending=nxt)), \
        "a strategy rebuilt with points pending asked other points once they were told"


def check_strategy_rejects_bad_input(factory: Callable[..., Any]) -> None:
    strategy = factory(PROBE_SPACE, seed=0)
    with _raises(SearcherError, "'n'"):
        strategy.ask(0, 0)
    with _raises(ParameterError, "losses in \\[0, 1\\]"):
        strategy.tell(np.full((1, PROBE_SPACE.dim), 0.5), np.array([2.0]))
    with _raises(ParameterError, "'seed'"):
        factory(PROBE_SPACE, seed=-1)
    composite = strategy.composite(np.full((1, PROBE_SPACE.dim), 0.5), np.array([1.0]))
    assert composite is None or np.shape(composite) == (1,), "composite gives one value per point, or None"


STRATEGY_CHECKS: list[Callable[[Callable[..., Any]], None]] = [
    check_strategy_proposes_cube_points,
    check_strategy_same_seed_same_points,
    check_strategy_resumes_exactly,
    check_strategy_resumes_exactly_with_points_pending,
    check_strategy_rejects_bad_input,
]


def check_strategy(factory: Callable[..., Any]) -> None:
    """Runs every strategy conformance check on `factory(space, seed=...)`."""
    for check in STRATEGY_CHECKS:
        check(factory)
