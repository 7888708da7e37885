"""A large `bo-modes` batch draws and scores its candidates once per ask (`pool.py`): far fewer
posteriors than one per point, the same batch for the same seed and history, and a harvest that
still spreads over the modes."""

from __future__ import annotations

import numpy as np
import pytest

from searcher.strategies import make_strategy
from searcher.strategies.bo import modes
from searcher.strategies.bo.pool import POOLED_FROM
from searcher.testing.planted import PlantedRegions

REGIONS = PlantedRegions(dim=6, k=4, volume=0.12, seed=0)


def told(seed: int = 0):
    """`bo-modes` told 300 uniform points of four planted boxes (12% of the cube)."""
    s = make_strategy("bo-modes", REGIONS.space, seed=seed, budget=4096)
    X = REGIONS.space.cube.snap(np.random.default_rng(1).random((300, 6)))
    s.tell(X, REGIONS.loss(X))
    return s, X


@pytest.fixture
def scored(monkeypatch):
    """The sizes of the candidate sets scored through the model's posterior."""
    calls, scores = [], modes._Model.scores
    monkeypatch.setattr(modes._Model, "scores", lambda self, X: (calls.append(len(X)), scores(self, X))[1])
    return calls


def test_a_batch_from_pooled_from_points_scores_candidates_a_few_times_not_once_a_point(scored):
    s, _ = told()
    s.ask(POOLED_FROM - 1, 1)
    assert len(scored) >= POOLED_FROM - 1  # one batch under the bar: fresh candidates for every point
    scored.clear()
    s, _ = told()
    s.ask(2 * POOLED_FROM, 1)
    assert len(scored) <= POOLED_FROM // 2 + 16  # a mode of one failure has 16 candidates, drawn again as they are taken


def test_a_pooled_batch_is_the_same_for_the_same_seed_and_history_and_spreads_its_harvest():
    (a, X), (b, _) = told(), told()
    batch = a.ask(128, 1)
    np.testing.assert_array_equal(batch, b.ask(128, 1))
    assert len(np.unique(batch, axis=0)) == 128 and not {r.tobytes() for r in batch} & {r.tobytes() for r in X}
    found = REGIONS.region_of(batch)
    assert (found >= 0).sum() >= 128 // 4 and len(np.unique(found[found >= 0])) >= 2  # failures, in more than one mode


def test_a_pooled_batch_steps_around_the_few_failures_of_a_mode_as_well_as_its_crowded_part():
    """A mode of 200 failures at one corner and 3 at the other (as when the graph joins a region
    found early and harvested with one found late): the candidates a pooled batch steps around are
    spread over the mode, so the corner of 3 gets its share of them (at least one centre of 32), where
    8 centres drawn at random miss it 9 times in 10."""
    s, _ = told()
    rng = np.random.default_rng(0)
    crowded = 0.2 + 0.02 * rng.standard_normal((200, 6))
    members = np.concatenate([crowded, 0.8 + 0.02 * rng.standard_normal((3, 6))])
    near_few = []
    for seed in range(20):
        C = s._mode_candidates(members, False, np.random.default_rng(seed), modes._POOL_PER_CENTRE, spread=True)
        near_few.append(np.mean(np.abs(C - 0.8).max(axis=1) < 0.3))
    assert min(near_few) >= 1 / modes._POOL_CENTRES
    alone = [np.mean(np.abs(s._mode_candidates(members, False, np.random.default_rng(seed), modes._PER_CENTRE) - 0.8).max(axis=1) < 0.3)
             for seed in range(20)]
    assert np.mean([a > 0 for a in alone]) < 0.3


def test_a_pool_knows_which_candidates_are_open_and_how_far_they_lie_as_a_fresh_pass_would():
    """What `Drawn` keeps up to date from the points chosen since it last looked (the candidates
    still open, the distance to the failures and the chosen points) equals a pass over every
    candidate, through a draw of more candidates when few are left."""
    s, X = told()
    loss = REGIONS.loss(X)
    model = s._fit(X, loss)
    failures = X[loss >= 1]
    pool = modes.Pool(s, model, 256, explorers=256)
    rng = np.random.default_rng(0)
    drawn = pool.drawn("k", lambda: s.cube.uniform(rng, 100))
    seen = {x.tobytes() for x in X}
    for step in range(90):
        free = drawn.free(seen)
        np.testing.assert_array_equal(free, s._proposable(drawn.C, seen))
        chosen = np.array(pool.chosen) if pool.chosen else np.zeros((0, 6))
        np.testing.assert_array_equal(drawn.nearest(failures), s._nearest(drawn.C, np.concatenate([failures, chosen])))
        x = drawn.C[np.flatnonzero(free)[0]] if step % 3 else s.cube.uniform(rng, 1)[0]  # its own candidates, and points from elsewhere
        pool.chose(x)
        seen.add(x.tobytes())
    assert len(drawn.C) > 100  # drawn again once fewer than `_LOW` were open


def test_leans_is_p_fail_of_at_least_a_half_without_the_variances():
    """`_Model.leans` (the failure graph's segment test, read from the posterior mean alone) says
    what `p_fail >= 0.5` says, under the classification likelihood and on graded losses."""
    for graded in (False, True):
        s, X = told()
        C = np.clip(X + 0.02 * np.random.default_rng(2).standard_normal(X.shape), 0, 1)  # near the told points: both sides
        loss = REGIONS.loss(X, score=graded)
        model = s._fit(X, loss)
        p = model.p_fail(C)
        assert 0.02 < (p >= 0.5).mean() < 0.98
        np.testing.assert_array_equal(model.leans(C), p >= 0.5)
        np.testing.assert_array_equal(model.means(C), model.scores(C)[1])
