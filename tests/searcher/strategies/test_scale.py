"""Long campaigns and large batches: past `max_points` a `bo-modes` step works on the GP's rows
only, resume stays exact there, and a batch of 1,024 never repeats a point."""

from __future__ import annotations

import numpy as np
import pytest

from searcher.space import Continuous, Space
from searcher.strategies import make_strategy
from searcher.strategies.bo.modes import FailureModes
from searcher.testing.planted import PlantedRegions

CUBE3 = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(3)])
PLANTED = PlantedRegions(dim=3, k=2, volume=0.08, seed=1)


def half_failing(X: np.ndarray) -> np.ndarray:
    """Failing where the first coordinate is above 0.6 (40% of the cube), passing elsewhere."""
    return (X[:, 0] > 0.6).astype(float)


def history(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 3))


def told(n: int, batches: int = 1, **options) -> FailureModes:
    """`bo-modes` told `n` uniform points of `half_failing`, in `batches` tells."""
    s = make_strategy("bo-modes", CUBE3, seed=0, budget=4096, **options)
    for X in np.array_split(history(n), batches):
        s.tell(X, half_failing(X))
    return s


def test_past_the_cap_a_step_sees_the_gps_rows_only(monkeypatch):
    """The failure graph, the crowding and the exploration get the same number of rows at 200 and
    at 800 told points once the history is past `max_points` (40): at most the cap, half of it failures."""
    sizes = []
    crowding = FailureModes._crowding

    def spy(self, failures, modes, model, X, loss):
        sizes.append((len(failures), len(X)))
        return crowding(self, failures, modes, model, X, loss)

    monkeypatch.setattr(FailureModes, "_crowding", spy)
    for n in (200, 800):
        told(n, max_points=40).ask(4, 0)
    assert sizes == [(20, 40), (20, 40)]


def test_at_or_under_the_cap_the_cap_changes_nothing():
    """A history of exactly `max_points` asks what an uncapped strategy asks, bit for bit."""
    capped, uncapped = told(60, max_points=60), told(60, max_points=100_000)
    assert np.array_equal(capped.ask(8, 3), uncapped.ask(8, 3))


@pytest.mark.parametrize("n", [4, 128])
def test_resume_past_the_cap_asks_the_same_batch(n):
    """A strategy rebuilt from a 300-point history (told in other batches) and the last state asks
    what the original asks next, past a cap of 40 (a batch of 128 from pooled candidates, `pool.py`)."""
    s = told(300, batches=3, max_points=40)
    s.ask(4, 0)
    X, loss = s.history.told()
    step = s.ask(4, 1)
    s.tell(step, half_failing(step))
    state = s.state()
    again = make_strategy("bo-modes", CUBE3, seed=0, budget=4096, max_points=40)
    for chunk in np.array_split(np.arange(len(X)), 7):
        again.tell(X[chunk], loss[chunk])
    again.tell(step, half_failing(step))
    again.restore(state)
    assert np.array_equal(s.ask(n, 2), again.ask(n, 2))


def test_a_point_told_before_the_window_is_never_asked_again():
    """Past the cap the step sees only the GP's rows, but every point answered stays off limits:
    told the whole history again, a batch holds none of it."""
    s = told(300, max_points=40)
    X = s.history.told()[0]
    batch = s.ask(64, 0)
    assert len(np.unique(batch, axis=0)) == 64
    assert not {row.tobytes() for row in batch} & {row.tobytes() for row in X}


@pytest.mark.parametrize("name", ["random", "sobol", "cmaes", "bo", "bo-modes-nomodel", "bo-modes"])
def test_a_batch_of_1024_holds_no_point_twice(name):
    """`ask(1024)` after a short history: 1,024 distinct points, none told before."""
    s = make_strategy(name, CUBE3, seed=0, budget=4096)
    X = history(40)
    s.tell(X, PLANTED.loss(X))
    batch = s.ask(1024, 1)
    assert batch.shape == (1024, 3)
    assert len(np.unique(batch, axis=0)) == 1024
    assert not {row.tobytes() for row in batch} & {row.tobytes() for row in X}


@pytest.mark.parametrize(("n", "conditionings"), [(4, 3), (64, 63), (65, 32), (1024, 63)])
def test_bo_conditions_on_its_fantasies_at_most_64_times_an_ask(monkeypatch, n, conditionings):
    """`bo` conditions its GP after every point of a batch of up to 64 (Kriging believer), and on
    blocks of its points beyond, so that an ask of 1,024 costs what one of 64 does, not minutes."""
    from botorch.models import SingleTaskGP

    calls = []
    condition = SingleTaskGP.condition_on_observations
    monkeypatch.setattr(SingleTaskGP, "condition_on_observations", lambda self, X, Y, **kw: calls.append(len(X)) or condition(self, X, Y, **kw))
    s = make_strategy("bo", CUBE3, seed=0, budget=4096)
    X = history(40)
    s.tell(X, PLANTED.loss(X))
    assert len(np.unique(s.ask(n, 1), axis=0)) == n
    assert len(calls) == conditionings and sum(calls) == conditionings * -(-n // 64)
