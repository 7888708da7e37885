"""A large `bo-modes` batch draws and scores its candidates once per ask (`pool.py`): far fewer
posteriors than one per point, the same batch for the same seed and history, and a harvest that
still spreads over the modes; with a graded loss it harvests by a classification of failed and
passed points, and its exploring points climb from more passes, closer together."""

from __future__ import annotations

import json

import numpy as np
import pytest

from searcher.strategies import make_strategy
from searcher.strategies.bo import modes
from searcher.strategies.bo.pool import POOLED_FROM
from searcher.testing.planted import PlantedRegions

REGIONS = PlantedRegions(dim=6, k=4, volume=0.12, seed=0)
SHELLS = PlantedRegions(dim=6, k=4, volume=0.002, shape="shell", seed=0)


def told(seed: int = 0):
    """`bo-modes` told 300 uniform points of four planted boxes (12% of the cube)."""
    s = make_strategy("bo-modes", REGIONS.space, seed=seed, budget=4096)
    X = REGIONS.space.cube.snap(np.random.default_rng(1).random((300, 6)))
    s.tell(X, REGIONS.loss(X))
    return s, X


def shells(failures: int, ablation: dict | None = None):
    """`bo-modes` (past its schedule's split) told 300 uniform passes of four thin planted shells
    (0.2% of the cube) and `failures` points inside them, with the shells' graded confidence as the loss."""
    U = SHELLS.space.cube.snap(np.random.default_rng(1).random((200_000, 6)))
    inside = U[SHELLS.region_of(U) >= 0][:failures]
    X = np.concatenate([U[:400][SHELLS.loss(U[:400], score=True) < 0.5][:300], inside])
    s = make_strategy("bo-modes", SHELLS.space, seed=0, budget=1000, ablation=ablation)
    s.tell(X, SHELLS.loss(X, score=True))
    return s


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


def test_with_a_graded_loss_a_pooled_batch_harvests_by_a_classification_carried_apart():
    """A pooled batch finds and harvests its modes with a classification of failed and passed points
    fitted beside the graded model, which the exploring points keep (over the cube, the graded model
    does not believe a thin shell's failures: docs/search.md). The classification's hyperparameters
    are carried in a slot of their own and restored with the state; the graded model's are those of
    a batch that fits it alone (a smaller one, or `pooled_model="same"`), which keeps no slot."""
    s = shells(60)
    s.ask(128, 1)
    state = s.state()
    assert state["fitted_as"] == "gaussian" and state["slots"]["harvest"]["fitted_as"] == "dirichlet"
    again = shells(60)
    again.restore(json.loads(json.dumps(state)))
    np.testing.assert_array_equal(s.ask(128, 2), again.ask(128, 2))
    for n, ablation in ((POOLED_FROM - 1, None), (128, {"pooled_model": "same"})):
        alone = shells(60, ablation)
        alone.ask(n, 1)
        assert "slots" not in alone.state() and alone.state()["gp"] == state["gp"]


def test_a_pooled_batchs_exploring_points_keep_a_quarter_of_the_radius_apart():
    """Before any failure every point explores. A pooled batch keeps its exploring points a quarter
    of `radius` apart (`pooled_spacing`), not the whole radius they keep from a failure: kept that far
    apart, 128 exploring points spread over the cube as a space-filling design and none climbs where
    another does; at a quarter, many share a climb."""
    apart = {}
    for spacing in (0.25, 1.0):
        s = shells(0, {"pooled_spacing": spacing})
        D = s._distance(batch := s.ask(128, 1), batch)
        apart[spacing] = D[np.triu_indices(len(batch), 1)]
    assert apart[0.25].min() >= 0.25 * 0.2 - 1e-12  # the default radius, 0.2
    # within the radius: points sharing a climb (with 1, only Sobol points taken once every candidate is closed)
    assert (apart[0.25] < 0.2).sum() > 10 * (apart[1.0] < 0.2).sum()


def test_a_pooled_batch_climbs_from_a_highest_pass_per_four_exploring_points(monkeypatch):
    """The exploring candidates step around the highest passes: 8 of them for a point asked alone,
    and in a pooled batch one per `pooled_climbers` (4) of the points its schedule gives to exploring."""
    centres = []
    around = modes.around
    monkeypatch.setattr(modes, "around", lambda cube, C, *a, **k: (centres.append(len(C)), around(cube, C, *a, **k))[1])
    explorers = sum(shells(0).explores(index) for index in range(300, 300 + 128))
    assert explorers // 4 > 8
    for n, ablation, tops in ((128, None, explorers // 4), (128, {"pooled_climbers": 0}, 8), (POOLED_FROM - 1, None, 8)):
        centres.clear()
        shells(0, ablation).ask(n, 1)
        assert set(centres) == {tops}
