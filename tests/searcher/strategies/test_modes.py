"""bo-modes: a trust region per failure mode, GP-guided exploration, and its model-free ablation."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
import torch
from gpytorch.likelihoods import DirichletClassificationLikelihood
from sklearn.metrics import roc_auc_score

from searcher.bench.cases import select_cases
from searcher.errors import ParameterError, PluginError
from searcher.objective import FAILURE
from searcher.space import Categorical, Continuous, Space
from searcher.strategies import Strategy, make_strategy
from searcher.strategies.bo import modes
from searcher.strategies.bo.gp import dirichlet_targets, normal_scores
from searcher.testing.planted import PlantedRegions

PLANTED = PlantedRegions(dim=3, k=2, volume=0.08, seed=1)
CUBE3 = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(3)])


def run_on(s: Strategy, loss: Callable[[np.ndarray], np.ndarray], steps: int) -> np.ndarray:
    """`steps` batches of 4 asked of `s` and told `loss`: every point asked, in order."""
    out = []
    for step in range(steps):
        X = s.ask(4, step)
        s.tell(X, loss(X))
        out.append(X)
    return np.concatenate(out)


BALLS = np.array([[0.22, 0.22, 0.22], [0.78, 0.78, 0.78]])  # two balls of failures at opposite corners of the cube


def two_balls(X: np.ndarray, decay: float) -> np.ndarray:
    """1 within 0.2 of either centre of `BALLS`; outside, a score that falls as `0.4 exp(-decay d)`."""
    d = np.sqrt(((X[:, None] - BALLS[None]) ** 2).sum(-1)).min(1)
    return np.where(d < 0.2, 1.0, 0.4 * np.exp(-decay * d))


def run(name: str, score: bool, steps: int = 30, seed: int = 0, planted: PlantedRegions = PLANTED, **options) -> np.ndarray:
    s = make_strategy(name, CUBE3, seed=seed, budget=4 * steps, **options)
    return run_on(s, lambda X: planted.loss(X, score=score), steps)


def both_harvested(X: np.ndarray) -> bool:
    """Whether each of `PLANTED`'s two regions holds at least a quarter as many of the failures in
    `X` as the other: both harvested, not one."""
    region = PLANTED.region_of(X)
    counts = np.bincount(region[region >= 0], minlength=2)
    return bool(counts.min() >= 0.25 * counts.max())


@pytest.mark.parametrize("score", [False, True])
def test_bo_modes_harvests_both_regions_and_beats_random(score):
    """3-D, two boxes, 8% of the volume, 120 evaluations: random expects ~10 failures. With a
    confidence the loss leads to both boxes; with 0/1 alone a box is found only by an exploring
    point landing in it (about 40 of them, ~1.6 expected per box), so one seed in three misses a
    box (seeds 0-5 measured: 2 of 6 with steps and with `inside="earned"`) and the claim is
    over seeds."""
    random_found = PLANTED.failures_found(run("random", score))
    X = run("bo-modes", score)
    assert PLANTED.failures_found(X) >= 3 * random_found
    assert len(np.unique(X, axis=0)) == len(X)  # never a repeat
    if score:
        assert both_harvested(X)
    else:
        assert sum(both_harvested(R) for R in [X, *(run("bo-modes", False, seed=seed) for seed in range(1, 6))]) >= 3


def test_the_ablation_runs_without_a_model_and_finds_less():
    """Two balls, 2% of the 3-D cube: their curved edges are where the model's guidance counts
    (seeds 0-2: 67-69 failures with it, 13-58 without). On `PLANTED`'s boxes, where the span of a
    mode's failures fails all over, the ablation finds about as many (74 against the model's 72 at seed 0)."""
    balls = PlantedRegions(dim=3, k=2, volume=0.02, seed=1, shape="ball")
    found = {name: balls.failures_found(run(name, True, planted=balls)) for name in ("bo-modes", "bo-modes-nomodel")}
    assert 0 < found["bo-modes-nomodel"] < 0.5 * found["bo-modes"], found


def harvesting(s: Strategy, failed: np.ndarray) -> np.ndarray:
    """Per point of a run of `s`, whether its schedule harvested it: after the Sobol start and the
    first failure (until then every point explores: no mode to harvest), and not an exploring point.
    Exact for a run with `explore_when="scheduled"`; by default a late exploring point whose draw
    finds nothing harvests too, which the schedule alone does not say."""
    first = int(np.argmax(failed))
    return np.array([i > first and i >= s.n_init and not s.explores(i) for i in range(len(failed))])


def harvest_hit_rate(score: bool, **switches) -> float:
    """How often `bo-modes`'s harvesting points fail, on `PLANTED` (3-D, two boxes, 120 evaluations):
    the modes' harvest alone, without the draws from the failing set at large (`anywhere=0`), on
    the schedule alone (`harvesting`)."""
    X = run("bo-modes", score, ablation={"anywhere": 0.0, "explore_when": "scheduled", **switches})
    failed = PLANTED.region_of(X) >= 0
    return float(failed[harvesting(make_strategy("bo-modes", CUBE3, budget=len(X)), failed)].mean())


@pytest.mark.slow
@pytest.mark.parametrize("score", [False, True])
def test_near_best_trades_spread_within_a_mode_for_harvesting_hits(score):
    """Harvesting among only the likeliest candidates (`near_best` 1) fails more often than
    spreading over any the model gives 0.3 of the best. Among Gaussian steps (`inside="never"`):
    inside a box's span every candidate fails, whichever the model prefers."""
    assert harvest_hit_rate(score, near_best=1.0, inside="never") > harvest_hit_rate(score, near_best=0.3, inside="never") + 0.1


@pytest.mark.slow
@pytest.mark.parametrize("score", [False, True])
def test_harvesting_inside_a_mode_fails_more_often_than_stepping_around_it(score):
    """Convex combinations of a mode's failures (`inside` "always") against Gaussian steps around
    them ("never"): the steps cross the boxes' edges, where the smooth model does not see them
    coming. Harvesting inside where it has hit more so far ("earned") takes most of that gain."""
    steps, always, earned = (harvest_hit_rate(score, inside=v) for v in ("never", "always", "earned"))
    assert always > steps + 0.1
    assert always >= earned > steps + 0.1


def test_the_span_is_harvested_only_where_it_has_hit_more_than_the_steps():
    """`inside="earned"`: with the span's harvest failing 40 times in 40 and the steps' 20 in 40, the
    span is drawn nearly always; with both at 35 in 40 (faces, where the span is no surer), seldom."""
    s = make_strategy("bo-modes", CUBE3, seed=0, ablation={"inside": "earned"})
    rng = np.random.default_rng(0)
    s._arms = np.array([[40.0, 20.0], [40.0, 40.0]])
    assert np.mean([s._span_arm(rng) for _ in range(500)]) > 0.95
    s._arms = np.array([[40.0, 35.0], [40.0, 35.0]])
    assert np.mean([s._span_arm(rng) for _ in range(500)]) < 0.1


def run_and_check_the_record(s: Strategy, steps: int) -> np.ndarray:
    """`steps` batches of `s` (`explore_when="scheduled"`, so that `harvesting` is exact) on
    `PLANTED` answered 0/1, checking that the harvest's record counts every harvesting point
    answered, and its failures, on one arm or another; every point asked."""
    X = run_on(s, lambda X: PLANTED.loss(X, score=False), steps)
    failed = PLANTED.region_of(X) >= 0
    harvested = harvesting(s, failed)
    assert s._arms[:, 0].sum() == harvested.sum()
    assert s._arms[:, 1].sum() == failed[harvested].sum()
    return X


def test_the_harvests_record_per_arm_is_told_and_restored():
    """Every harvesting point answered is counted against the kind of candidate it was (a point of
    no answer is not), and a strategy restored from the state asks the same points next."""
    s = make_strategy("bo-modes", CUBE3, seed=0, budget=120, ablation={"inside": "earned", "explore_when": "scheduled"})
    X = run_and_check_the_record(s, 20)
    assert s._arms[1, 0] > 0
    again = make_strategy("bo-modes", CUBE3, seed=0, budget=120, ablation={"inside": "earned", "explore_when": "scheduled"})
    again.tell(X, PLANTED.loss(X, score=False))
    again.restore(s.state())
    np.testing.assert_array_equal(again.ask(4, 20), s.ask(4, 20))
    before = s._arms.copy()
    asked = s.ask(4, 21)
    s.tell(asked, np.full(4, np.nan))
    np.testing.assert_array_equal(s._arms, before)


def test_the_harvest_scores_only_the_modes_that_can_win(monkeypatch):
    """The harvest scores the modes from the least crowded up and stops where `(1 + failures
    near)^-3` leaves the more crowded ones no chance (`p_fail` <= 1): the pick of scoring every mode
    by the module's rule, from a fraction of the posteriors. Of the two least crowded modes, the one
    whose pick fails likelier is made barely more crowded (by half the gap, whichever it is where
    the GP's numerics put it): it wins, and the last two are never scored."""
    s = make_strategy("bo-modes", CUBE3, seed=0, budget=120, ablation={"anywhere": 0.0})
    run_on(s, lambda X: PLANTED.loss(X, score=True), 30)
    X, loss = s.history.answered()
    model = s._fit(X, loss)
    failures = X[loss >= FAILURE]
    labels = np.arange(len(failures)) % 4  # four modes
    members = [failures[labels == m] for m in range(4)]
    seen = {r.tobytes() for r in X}
    recorded, scored = [], []
    proposable, scores = s._proposable, model.scores
    monkeypatch.setattr(s, "_proposable", lambda C, seen: recorded.append(C[proposable(C, seen)]) or proposable(C, seen))

    def pick(m: int, C: np.ndarray) -> float:
        """log p_fail at the mode's harvesting pick, by the module's rule."""
        log_p = scores(C)[0]
        good = np.flatnonzero(log_p >= np.log(s.ablation.near_best) + log_p.max())
        at = good[np.argmax(s._nearest(C[good], failures))] if log_p.max() >= np.log(modes._SURE) else int(np.argmin(s._nearest(C, failures[labels == m])))
        return float(log_p[at])

    s._harvest(model, (X, loss), failures, members, np.zeros(4), False, [], seen, np.random.default_rng(0))
    picks = [pick(m, C) for m, C in enumerate(recorded)]  # the candidates do not depend on the counts
    low, likelier = np.argsort(picks[:2])
    gap = picks[likelier] - picks[low]
    assert gap > 0
    counts = np.array([0.0, 0.0, 2.0, 9.0])
    counts[likelier] = np.expm1(gap / (2 * modes._EVENNESS))
    recorded.clear()
    monkeypatch.setattr(model, "scores", lambda C: scored.append(len(C)) or scores(C))
    x, mode = s._harvest(model, (X, loss), failures, members, counts, False, [], seen, np.random.default_rng(0))
    values = [p - modes._EVENNESS * np.log1p(c) for p, c in zip(picks, counts)]
    assert mode == int(np.argmax(values)) == likelier and x.tobytes() in {c.tobytes() for c in recorded[mode]}
    assert sum(scored) == len(recorded[0]) + len(recorded[1]), scored  # the two least crowded modes only


def test_the_anywhere_draws_are_made_only_where_they_have_hit_about_as_often_as_the_modes():
    """`anywhere_rule="earned"`: with the anywhere draws failing 36 times in 40 and the modes'
    harvest 60 in 80, they are drawn nearly always; at 20 in 40 against 76 in 80 (a model sure of
    failing sets smoother than the regions' edges), seldom. "always" draws them whatever the record."""
    s = make_strategy("bo-modes", CUBE3, seed=0, ablation={"anywhere": 0.5, "anywhere_rule": "earned"})
    rng = np.random.default_rng(0)
    s._arms = np.array([[40.0, 30.0], [40.0, 30.0], [40.0, 36.0]])
    assert np.mean([s._anywhere_arm(rng) for _ in range(500)]) > 0.95
    s._arms = np.array([[40.0, 38.0], [40.0, 38.0], [40.0, 20.0]])
    assert np.mean([s._anywhere_arm(rng) for _ in range(500)]) < 0.05
    assert make_strategy("bo-modes", CUBE3, seed=0, ablation={"anywhere_rule": "always"})._anywhere_arm(rng)


def test_the_anywhere_draws_are_counted_on_their_own_record():
    """Each anywhere draw answered is counted on the third row of the harvest's record, beside the
    modes' steps and spans; a state saved before that row existed (two rows) restores with it empty."""
    s = make_strategy("bo-modes", CUBE3, seed=0, budget=120, ablation={"anywhere_rule": "always", "explore_when": "scheduled"})
    run_and_check_the_record(s, 30)
    assert s._arms[2, 0] > 10
    old = {**s.state(), "arms": s._arms[:2].tolist()}
    again = make_strategy("bo-modes", CUBE3, seed=0, budget=120, ablation={"anywhere_rule": "always"})
    again.restore(old)
    np.testing.assert_array_equal(again._arms, np.vstack([s._arms[:2], np.zeros((1, 2))]))


def test_harvesting_candidates_lie_in_the_span_of_the_modes_failures():
    """Convex combinations of three of a mode's failures: inside their bounding box, at their
    category's level, and more than three distinct failures mixed."""
    space = Space([Continuous("a", 0.0, 1.0), Continuous("b", 0.0, 1.0), Categorical("c", ["x", "y", "z"])])
    s = make_strategy("bo-modes", space, seed=0, ablation={"inside": "always"})
    members = np.array([[0.1, 0.2, 0, 1, 0], [0.3, 0.2, 0, 1, 0], [0.2, 0.5, 0, 1, 0], [0.25, 0.3, 0, 1, 0]], float)
    C = s._inside(members, np.random.default_rng(0), 200)
    assert (C[:, :2] >= members[:, :2].min(0) - 1e-12).all() and (C[:, :2] <= members[:, :2].max(0) + 1e-12).all()
    assert (C[:, 2:] == members[0, 2:]).all()
    assert len(np.unique(C.round(9), axis=0)) == 200


def test_modes_are_the_connected_failing_regions():
    """Failures of 300 random points in two separated boxes: no mode joins the two boxes, and
    sparse failures in one box are at most split in two (a split mode is harvested twice, a joined
    one would hide a region)."""
    s = make_strategy("bo-modes", CUBE3, seed=0)
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    s.tell(X, PLANTED.loss(X, score=True))
    Xa, loss = s.history.answered()
    failures = Xa[loss >= FAILURE]
    modes = s._modes(failures, s._fit(Xa, loss))
    truth = PLANTED.region_of(failures)
    assert 2 <= len(np.unique(modes)) <= 4
    assert all(len(np.unique(truth[modes == m])) == 1 for m in np.unique(modes))


def test_a_stray_failure_beside_a_mode_counts_the_failures_of_the_mode():
    """The harvest's evenness counts the failures near a mode, not only in it. Two balls at
    opposite corners of the cube: a failure set apart from its ball's other failures (as the graph
    leaves a stray where the model is unsure) counts them all; each ball's mode counts its own
    failures and none of the other ball's; the ablation counts a mode's own."""
    s = make_strategy("bo-modes", CUBE3, seed=0)
    X = np.random.default_rng(0).random((500, 3))
    s.tell(X, two_balls(X, decay=1.0))
    Xa, y = s.history.answered()
    failures = Xa[y >= FAILURE]
    ball = (failures[:, 0] > 0.5).astype(int)
    stray = np.flatnonzero(ball == 0)[0]
    modes = np.where(np.arange(len(failures)) == stray, 1, 0) + 2 * ball  # ball 0 split in two, ball 1 whole
    crowding = s._crowding(failures, modes, s._fit(Xa, y), Xa, y)[0]
    in_ball = np.bincount(ball)
    assert in_ball.min() >= 5
    assert crowding[1] == in_ball[0] and crowding[0] == in_ball[0] and crowding[2] == in_ball[1]
    assert np.array_equal(s._crowding(failures, modes, None, Xa, y)[0], np.bincount(modes))


def test_a_lone_failure_counted_against_a_mode_beside_it_is_probed_and_a_gap_frees_it():
    """Two balls of failures side by side, 0.06 apart: five failures known in the first, one in the
    second, and passes told only far from both. The kernel correlates the lone failure with the
    first ball's, and each mode counts the other's failures; the midpoint between the lone failure
    and the nearest of them is the probe asked for. Told a pass there (a gap), each mode counts its
    own and the probe is not asked again; told a failure there (no gap seen), each still counts
    the other's. A failure at another level of a category is neither freed nor probed."""
    space = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(3)] + [Categorical("c", ("a", "b"))])
    s = make_strategy("bo-modes", space, seed=0, ablation={"probe": True})
    rng = np.random.default_rng(0)
    first = np.array([0.35, 0.5, 0.5]) + 0.05 * rng.standard_normal((5, 3))
    lone = np.array([[0.69, 0.5, 0.5]])
    far = rng.random((40, 3)) * 0.2  # passes in one corner, far from both balls
    level = np.array([1.0, 0.0])
    X = np.concatenate([np.concatenate([P, np.tile(level, (len(P), 1))], axis=1) for P in (first, lone, far)])
    y = np.r_[np.ones(6), np.zeros(40)]
    s.tell(X, y)
    model = s._fit(X, y)
    kernel = model.gp.covar_module.base_kernel if hasattr(model.gp.covar_module, "base_kernel") else model.gp.covar_module
    kernel.lengthscale = torch.tensor([[0.5, 0.5, 0.5, 5.0, 5.0]], dtype=kernel.lengthscale.dtype)  # the two balls correlate, and the levels
    failures, modes = X[:6], np.array([0, 0, 0, 0, 0, 1])
    counts, probes = s._crowding(failures, modes, model, X, y)
    assert counts.tolist() == [6, 6]
    nearest = failures[np.argmin(np.linalg.norm(failures[:5, :3] - lone[0], axis=1))]
    assert np.allclose(probes[0], 0.5 * (nearest + X[5]))
    for told, expected in ((0.0, [5, 1]), (1.0, [6, 6])):
        counts, again = s._crowding(failures, modes, model, np.concatenate([X, probes[:1]]), np.r_[y, told])
        assert counts.tolist() == expected
        assert not any(np.allclose(p, probes[0]) for p in again)
    other = failures.copy()
    other[5, 3:] = [0.0, 1.0]  # the lone failure at the other level
    counts, probes = s._crowding(other, modes, model, np.concatenate([other, X[6:]]), y)
    assert counts[1] == 6 and not probes
    s.ablation = dataclasses.replace(s.ablation, probe=False)  # the default: counted as before, nothing probed
    assert s._crowding(failures, modes, model, X, y)[0].tolist() == [6, 6] and not s._crowding(failures, modes, model, X, y)[1]


def test_exploration_leaves_out_the_slopes_of_modes_already_found():
    """Two hills of loss, one ball of failures on top of each (the planted score's shape); only the
    first ball's failures are known. A pass on the first ball's slope is on a known slope (the mean
    rises all the way to a failure); one on the far slope of the second ball is not (the valley
    between the balls parts them), nor is one beside the second ball, inside the same valley."""
    s = make_strategy("bo-modes", CUBE3, seed=0)
    X = np.random.default_rng(0).random((400, 3))
    s.tell(X, two_balls(X, decay=3.0))
    Xa, y = s.history.answered()
    known = Xa[(y >= FAILURE) & (Xa[:, 0] < 0.5)]  # the first ball's failures only
    assert len(known) >= 3
    C = np.array([[0.05, 0.05, 0.05], [0.22, 0.45, 0.22], [0.95, 0.95, 0.95], [0.78, 0.55, 0.78]])
    assert s._on_known_slope(s._fit(Xa, y), C, known).tolist() == [True, True, False, False]


@pytest.mark.parametrize("explore, uniform_draws", [("climb", 0), ("draw", 8)])
def test_climbing_explores_beside_the_highest_passes_off_the_known_slopes(monkeypatch, explore, uniform_draws):
    """Two hills of loss; the first ball's failures are known, the second ball was never entered.
    With `explore="climb"` no exploring candidate is a uniform point (the default draws a set of
    them for each of its 8 points), and every exploring point lies beside the second ball: the
    first hill's passes are on a known slope, so it climbs the hill of the region not yet found
    (in 3-D the default's draw goes there too)."""
    X = np.random.default_rng(0).random((400, 3))
    X = X[np.linalg.norm(X - BALLS[1], axis=1) >= 0.2]  # the second ball never entered
    s = make_strategy("bo-modes", CUBE3, seed=0, ablation={"explore": explore})
    s.tell(X, two_balls(X, decay=3.0))
    Xa, y = s.history.answered()
    calls, uniform = [], type(s.cube).uniform
    monkeypatch.setattr(type(s.cube), "uniform", lambda cube, rng, n: calls.append(n) or uniform(cube, rng, n))
    with torch.no_grad():
        model, failures, seen = s._fit(Xa, y), Xa[y >= FAILURE], {row.tobytes() for row in Xa}
        picks = np.array([s._explore(model, Xa, y, failures, [], seen, np.random.default_rng(k))[0] for k in range(8)])
    assert len(calls) == uniform_draws
    assert (np.linalg.norm(picks - BALLS[1], axis=1) < 0.3).all()


def one_ball(X: np.ndarray) -> np.ndarray:
    """`two_balls`'s first ball alone: 1 within 0.2 of its centre, outside `0.4 exp(-3 d)`."""
    d = np.linalg.norm(X - BALLS[0], axis=1)
    return np.where(d < 0.2, 1.0, 0.4 * np.exp(-3.0 * d))


def test_a_hopeless_exploring_draw_harvests_after_the_split_and_explores_before_it():
    """One ball of failures in a cube told densely: the model is sure nothing fails beyond it, so the
    exploring draw puts a failure nowhere. With `explore_when="hopeful"` (the default), a point the
    schedule gives to exploring after the split harvests the ball instead, counted on the harvest's
    record as every harvesting point is; before the split (a larger budget puts it later) it
    explores as `"scheduled"` has it, at least `radius` from every failure."""
    X = np.random.default_rng(0).random((400, 3))
    failures = X[one_ball(X) >= FAILURE]
    for budget in (800, 1200):  # the split at point 320 (the points asked come after it), and at 480
        asked = {}
        for when in ("scheduled", "hopeful"):
            s = make_strategy("bo-modes", CUBE3, seed=0, budget=budget, ablation={"explore_when": when})
            s.tell(X, one_ball(X))
            asked[when] = s.ask(8, 0)
        exploring = np.array([s.explores(400 + i) for i in range(8)])
        assert exploring.any(), "the schedule gives none of the 8 points to exploring"
        near = np.linalg.norm(asked["hopeful"][exploring][:, None] - failures[None], axis=2).min(1) / np.sqrt(3) < s.radius
        assert near.all() if budget == 800 else not near.any(), budget
        pending = [x.tobytes() in s._pending for x in asked["hopeful"][exploring]]  # counted on the harvest's record
        assert all(pending) if budget == 800 else not any(pending), budget
        assert np.array_equal(asked["scheduled"], asked["hopeful"]) == (budget == 1200)


def test_a_pooled_batch_whose_exploring_pool_is_closed_harvests_after_the_split(monkeypatch):
    """A pooled batch (64 points or more) draws its exploring candidates once, and its own points
    can close them all (`Pool.explore` gives none). No draw then hopes for a failure: after the
    split the point harvests, as a hopeless draw does; before it, it explores with the next point
    of the strategy's Sobol sequence."""
    from searcher.strategies.baselines import sobol_points
    from searcher.strategies.bo.pool import POOLED_FROM, Pool

    monkeypatch.setattr(Pool, "explore", lambda self, build, avoid, seen: None)
    X = np.random.default_rng(0).random((400, 3))
    failures = X[one_ball(X) >= FAILURE]
    for budget in (800, 1200):  # the split at point 320 (the points asked come after it), and at 480
        s = make_strategy("bo-modes", CUBE3, seed=0, budget=budget)
        s.tell(X, one_ball(X))
        asked = s.ask(POOLED_FROM, 0)
        exploring = np.array([s.explores(400 + i) for i in range(POOLED_FROM)])
        assert exploring.any(), "the schedule gives none of the points to exploring"
        if budget == 800:
            near = np.linalg.norm(asked[exploring][:, None] - failures[None], axis=2).min(1) / np.sqrt(3) < s.radius
            assert near.all()
            assert all(x.tobytes() in s._pending for x in asked[exploring])  # counted on the harvest's record
        else:
            assert np.array_equal(asked[exploring], CUBE3.cube.snap(sobol_points(3, 0, 0, int(exploring.sum()))))


def test_normal_scores_share_ties_and_keep_the_order():
    z = normal_scores(np.array([0.0, 1.0, 0.0, 0.3]))
    assert z[0] == z[2] < z[3] < z[1] and z[1] == -normal_scores(np.arange(4.0))[0]


@pytest.mark.parametrize("options, match", [({"early": 1.5}, "'early'"), ({"radius": 0}, "'radius'"), ({"unjudged": (3, 0.2, 0.4)}, "unjudged column"),
                                            ({"unjudged": (0, 0.6, 0.4)}, "must not be above"), ({"unjudged": (0, 0.2)}, "column, low, high"),
                                            ({"likelihood": "probit"}, "'gaussian', 'dirichlet'"), ({"max_points": 5}, "'max_points'"),
                                            ({"ablation": {"model": "linear"}}, "'gp', 'constant'"), ({"ablation": {"near_best": 0}}, "'near_best'"),
                                            ({"ablation": {"probe": "maybe"}}, "The .probe. option of ModesAblation must be True or False. Got .maybe."),
                                            ({"ablation": {"inside": True}}, "'never', 'always', 'earned'"), ({"ablation": {"anywhere": 2}}, "'anywhere'"),
                                            ({"ablation": {"anywhere_rule": "sometimes"}}, "'always', 'earned'"),
                                            ({"ablation": {"explore": "climb-all"}}, "'draw', 'climb'"),
                                            ({"ablation": {"explore_when": "always"}}, "'scheduled', 'hopeful'"),
                                            ({"ablation": {"prob": True}}, "no switch 'prob'. Its switches: model, inside"),
                                            ({"ablation": "probe"}, "a ModesAblation or a table of its switches")])
def test_bad_options_are_named(options, match):
    with pytest.raises(ParameterError, match=match):
        make_strategy("bo-modes", CUBE3, **options)


def test_the_ablation_switches_are_one_option_not_the_strategys_own():
    """The switches that turn rules off are `ablation`'s keys, not options of the strategy: an
    instance or a mapping, the words of the command line read as values ("true"), and the
    model-free ablation the same switches with `model` "constant". A switch given as an option of
    its own, as a stored campaign may hold it, is moved into the table by `upgrade_options`."""
    from searcher.strategies import MOVED_OPTIONS, STRATEGIES, upgrade_options

    switches = [f.name for f in dataclasses.fields(modes.ModesAblation)]
    assert not set(switches) & set(STRATEGIES.options("bo-modes")) and "ablation" in STRATEGIES.options("bo-modes")
    later = {"uniform", "pooled_model", "pooled_climbers", "pooled_spacing"}  # came after the move, switches from the start
    assert sorted(MOVED_OPTIONS["bo-modes"][1]) == sorted(set(switches) - later)
    s = make_strategy("bo-modes", CUBE3, ablation={"probe": "true", "anywhere": 0})
    assert s.ablation == modes.ModesAblation(probe=True, anywhere=0.0) and s.ablation.changed() == {"anywhere": 0.0, "probe": True}
    assert make_strategy("bo-modes", CUBE3).ablation == modes.ModesAblation() and not modes.ModesAblation().changed()
    free = make_strategy("bo-modes-nomodel", CUBE3, ablation={"inside": "never"}).ablation
    assert free == modes.ModesAblation(model="constant", inside="never")
    assert upgrade_options("bo-modes", {"probe": True, "late": 0.05}) == {"late": 0.05, "ablation": {"probe": True}}
    assert upgrade_options("bo-modes", {"inside": "never", "ablation": {"probe": True}}) == {"ablation": {"inside": "never", "probe": True}}
    assert upgrade_options("cmaes", {"sigma": 0.1}) == {"sigma": 0.1} and upgrade_options(None, {"explore": "climb"}) == {"ablation": {"explore": "climb"}}
    with pytest.raises(ParameterError, match="belong.* in the strategy option 'ablation' now"):
        upgrade_options("bo-modes", {"probe": True, "ablation": {"probe": False}})
    with pytest.raises(PluginError, match="takes no option 'probe'"):
        make_strategy("bo-modes", CUBE3, probe=True)


def test_the_same_switches_give_the_same_points_however_they_are_given():
    """An instance, a mapping and the model-free strategy's name ask the same points as each other."""
    space = PLANTED.space
    asked = {}
    for key, (name, options) in {"instance": ("bo-modes", {"ablation": modes.ModesAblation(model="constant", inside="never")}),
                                 "mapping": ("bo-modes", {"ablation": {"model": "constant", "inside": "never"}}),
                                 "name": ("bo-modes-nomodel", {"ablation": {"inside": "never"}})}.items():
        asked[key] = run_on(make_strategy(name, space, seed=1, budget=48, **options), lambda X: PLANTED.loss(X, score=True), 12)
    assert np.array_equal(asked["instance"], asked["mapping"]) and np.array_equal(asked["instance"], asked["name"])


@pytest.mark.parametrize("name", ["bo", "bo-modes"])
def test_beyond_max_points_the_model_is_fitted_on_the_recent_failures_and_passes(name):
    """A history of 150 points, failures every third: capped at 60, the GP is fitted on the 30 most
    recent failures and the 30 most recent passes, and a step past the cap fits no more (its cost
    stays the cap's); at or under the cap, on everything. Where failures are too few for half,
    passes fill the rest."""
    rng = np.random.default_rng(0)
    X, loss = rng.random((150, 3)), (np.arange(150) % 3 == 0).astype(float)
    s = make_strategy(name, CUBE3, max_points=60)
    rows = s._training_rows(loss)
    failed, passed = np.flatnonzero(loss == 1), np.flatnonzero(loss == 0)
    assert rows.tolist() == sorted(failed[-30:].tolist() + passed[-30:].tolist())
    assert make_strategy(name, CUBE3, max_points=150)._training_rows(loss).tolist() == list(range(150))
    rare = np.zeros(150)
    rare[[3, 70]] = 1.0
    assert s._training_rows(rare).tolist() == [3, 70, *range(92, 150)]
    s.tell(X, loss)
    s.ask(4, 0)
    assert s.state()["fitted_on"] == 60


def test_a_lone_failure_the_model_does_not_believe_is_harvested_close_by():
    """The suite's planted-d6-k5, seed 2: one failure at the 7th point, then only passes with loss
    0. The GP explains the lone failure as noise (p_fail ~0 everywhere), so ranking candidates by
    it sent every harvest to the farthest, highest-variance ones: 2 failures in 400 evaluations.
    The harvest then stepped to the posterior mean's best, which on other numerics (another
    CPU, other library releases) lay away from the failure: 2 failures in 80. It now steps to
    the candidate nearest the mode's failures."""
    case = select_cases("planted-d6-k5")[0]
    regions = case.regions()
    s = make_strategy("bo-modes", regions.space, seed=2, budget=400)
    X = run_on(s, lambda X: regions.loss(X, score=case.score), steps=20)
    assert (regions.region_of(X) >= 0).sum() >= 8


def test_a_mode_never_spans_two_levels_of_a_category():
    """A box that fails at both levels of a category (the loss ignores it), three failures at each
    level, each nearest its twin at the other level: no point of the space lies between two
    levels, so failures at different levels are different modes, whatever the model predicts at
    fractional one-hot points. On the suite's categorical cases the modes had joined regions of
    different levels into one, and the harvest filled it unevenly."""
    space = Space([Categorical("c", ("a", "b")), Continuous("x0", 0.0, 1.0), Continuous("x1", 0.0, 1.0)])
    corners = np.array([[0.05, 0.05], [0.55, 0.05], [0.05, 0.55]])
    failures = np.array([[1.0 - level, level, *xy] for level in (0, 1) for xy in corners])
    for name in ("bo-modes", "bo-modes-nomodel"):
        s = make_strategy(name, space, seed=0, radius=0.3)  # the ablation's join radius reaches the twins (0.2 apart)
        X = s.cube.uniform(np.random.default_rng(0), 300)
        X = X[(X[:, 2] > 0.7) | (X[:, 3] > 0.7)]
        s.tell(np.concatenate([X, failures]), np.concatenate([0.4 * np.minimum(X[:, 2:].max(axis=1), 1.0), np.ones(6)]))
        Xa, loss = s.history.answered()
        failing = loss >= FAILURE
        modes = s._modes(Xa[failing], s._fit(Xa, loss) if name == "bo-modes" else None)
        level = Xa[failing, 1].astype(int)
        assert all(len(np.unique(level[modes == m])) == 1 for m in np.unique(modes)), (name, modes, level)


@pytest.mark.parametrize("name", ["bo-modes", "bo-modes-nomodel"])
def test_no_point_is_proposed_where_the_target_judges_nothing(name):
    """A classify target excludes faces whose truth sits at its cut: told that band (x0 in 0.3-0.6,
    where the planted boxes' failures also lie in part), the search proposes nothing inside it after
    its Sobol start, and still finds failures outside it."""
    band = (0, 0.3, 0.6)
    inside = lambda X: (X[:, 0] > 0.3) & (X[:, 0] < 0.6)  # noqa: E731
    loss = lambda X: np.where(inside(X), np.nan, PLANTED.loss(X, score=True))  # noqa: E731  (NaN: not judged)
    s = make_strategy(name, CUBE3, seed=0, budget=120, unjudged=band)
    X = run_on(s, loss, 30)
    first = int(np.argmax(PLANTED.region_of(X) >= 0))
    # the ablation explores with plain Sobol points: only its harvest keeps out
    modelled = [i for i in range(max(20, first + 1), len(X)) if name == "bo-modes" or not s.explores(i)]
    assert len(modelled) > 50 and not inside(X[modelled]).any()
    assert PLANTED.failures_found(X) >= 10
    unaware = run_on(make_strategy(name, CUBE3, seed=0, budget=120), loss, 30)
    assert inside(unaware[20:]).sum() > 5  # without the band, points are spent there


@pytest.mark.parametrize("likelihood", ["gaussian", "dirichlet"])
def test_with_a_truth_cut_the_model_follows_the_targets_evidence_across_it(likelihood):
    """A classifier's loss flips at the truth's cut (1 - p(true label): p above it, 1 - p below),
    while its evidence p for the label above the cut is smooth. Given the band the target never
    judges (x0 in 0.4-0.6), the GP models that evidence on both sides, and its `p_fail` reads
    failures on either side: high evidence below the cut, low evidence above it. The
    classification likelihood models only which side of 0.5 the evidence lies, and its score (the
    failure class's function less the other's) follows the evidence as closely."""
    space = Space([Continuous(f"x{i}", 0.0, 1.0) for i in range(6)])
    evidence = lambda X: 1.0 / (1.0 + np.exp(-6.0 * (X[:, 1] + X[:, 2] - X[:, 3] - 0.5)))  # noqa: E731
    loss = lambda X: np.where(X[:, 0] <= 0.4, evidence(X), 1.0 - evidence(X))  # noqa: E731
    rng = np.random.default_rng(0)
    X, H = (P[np.abs(P[:, 0] - 0.5) >= 0.1] for P in (rng.random((100, 6)), rng.random((2000, 6))))
    s = make_strategy("bo-modes", space, seed=0, unjudged=(0, 0.4, 0.6), likelihood=likelihood)
    s.tell(X, loss(X))
    model = s._fit(*s.history.answered())
    with torch.no_grad():
        mean = model.posterior(H).mean.reshape(-1).numpy()
    for side in (H[:, 0] < 0.5, H[:, 0] > 0.5):
        assert np.corrcoef(mean[side], evidence(H[side]))[0, 1] > 0.9  # the evidence, not the flipping loss
        fails = loss(H[side]) >= FAILURE
        assert roc_auc_score(fails, model.p_fail(H[side])) > 0.95


def test_dirichlet_targets_are_gpytorchs():
    """The classification likelihood's regression targets and noise, written out, are GPyTorch's
    `DirichletClassificationLikelihood`'s (Milios et al. 2018), class by class."""
    failed = np.array([True, False, False, True, False])
    y, noise = dirichlet_targets(failed)
    reference = DirichletClassificationLikelihood(torch.tensor(failed.astype(int)), dtype=torch.float64)
    np.testing.assert_allclose(y.T, reference.transformed_targets.numpy())
    np.testing.assert_allclose(noise.T, reference.noise.numpy())


def test_the_classification_likelihood_ranks_held_out_failures_and_harvests():
    """On 0/1 answers alone (`PLANTED`'s two 3-D boxes), the Dirichlet model fitted on 150 uniform
    points ranks 3,000 held-out ones by `p_fail` (AUC 0.96; the copula's 0.95), and a search with it
    finds several times random's failures in both boxes (seed 0: 72 failures, 36 in each), its
    modes' harvest alone (`anywhere=0`: with the default's draws at large, 66 in one box)."""
    rng = np.random.default_rng(0)
    X, H = rng.random((150, 3)), rng.random((3000, 3))
    s = make_strategy("bo-modes", CUBE3, seed=0, likelihood="dirichlet")
    s.tell(X, PLANTED.loss(X))
    assert roc_auc_score(PLANTED.region_of(H) >= 0, s._fit(*s.history.answered()).p_fail(H)) > 0.9
    found = run("bo-modes", False, likelihood="dirichlet", ablation={"anywhere": 0.0})
    assert PLANTED.failures_found(found) >= 3 * PLANTED.failures_found(run("random", False)) and both_harvested(found)


def test_the_default_likelihood_classifies_0_1_answers_and_models_graded_ones_on_their_scores():
    """`likelihood="auto"` fits the classification model while every loss told is 0 or 1 and the
    copula once one is graded; a search that meets a graded answer after 0/1 ones refits from scratch
    (the hyperparameters carried are the other model's), and the state says which model they are of."""
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    s = make_strategy("bo-modes", CUBE3, seed=0)
    s.tell(X, PLANTED.loss(X))
    assert s._fit(*s.history.answered())._difference is not None and s.state()["fitted_as"] == "dirichlet"
    s.ask(4, 0)
    restored = make_strategy("bo-modes", CUBE3, seed=0)
    restored.tell(X, PLANTED.loss(X))
    restored.restore(s.state())
    more = rng.random((4, 3))
    graded = PLANTED.loss(more, score=True)
    assert not np.isin(graded, (0.0, 1.0)).all()
    for strategy in (s, restored):
        strategy.tell(more, graded)
    np.testing.assert_array_equal(s.ask(4, 1), restored.ask(4, 1))
    assert s.state()["fitted_as"] == "gaussian" and s._fit(*s.history.answered())._difference is None
    forced = make_strategy("bo-modes", CUBE3, seed=0, likelihood="gaussian")
    forced.tell(X, PLANTED.loss(X))
    assert forced._fit(*forced.history.answered())._difference is None


@pytest.mark.slow
def test_harvesting_anywhere_draws_from_the_whole_failing_set(monkeypatch):
    """`anywhere`: a harvesting point drawn from the failing set the model is sure of, not from a
    mode. After a run of the modes' harvest alone that found both of `PLANTED`'s boxes (8% of the
    cube, answered 0/1), 200 such draws from its model fail 73% of the time and fall in both boxes,
    each holding a fair share: a draw over the whole failing set, as random search's failures fall.
    Drawn from all the model predicts failing (`p_fail` >= 0.5), they fail less often (54%): a
    classification of 0/1 answers is smoother than a box's edge."""
    s = make_strategy("bo-modes", CUBE3, seed=0, budget=120, ablation={"anywhere": 0.0})
    X = run_on(s, lambda X: PLANTED.loss(X, score=False), 30)
    assert set(PLANTED.region_of(X)) >= {0, 1}
    model = s._fit(*s.history.answered())

    def draws() -> np.ndarray:
        rng = np.random.default_rng(0)
        return PLANTED.region_of(np.stack([s._draw_anywhere(model, set(), rng) for _ in range(200)]))

    region = draws()
    assert (region >= 0).mean() > 0.65
    shares = np.bincount(region[region >= 0], minlength=2) / (region >= 0).sum()
    assert shares.min() > 0.25, shares
    monkeypatch.setattr(modes, "_SURE_ANYWHERE", 0.5)
    assert (draws() >= 0).mean() < (region >= 0).mean() - 0.1
    assert make_strategy("bo-modes", CUBE3, seed=0, ablation={"anywhere": 0.5}).ablation.anywhere == 0.5


def test_uniform_draws_count_the_modes_they_found_first_and_failed_in_once():
    """The Good-Turing reading of the uniform draws (`uniform="earned"`): of four modes, the first
    was found by the search before any draw failed there, the second by a draw and once, the third
    by a draw and twice, the fourth by a draw once with the search's failures after it. Singletons:
    the second and the fourth; draws: every uniform point answered, failed or not."""
    s = make_strategy("bo-modes", CUBE3, seed=0, ablation={"uniform": "earned"})
    loss = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1], float)  # told in this order
    modes_told = np.array([0, 0, -1, 1, 2, 2, -1, 3, 3, 3])  # -1: a pass
    s._uniform = [1, 2, 3, 4, 5, 6, 7]  # the draws: a failure in mode 0 after the search's, two passes, 1, 2, 2, 3
    s.tell(np.random.default_rng(0).random((10, 3)), loss)
    failed = loss >= FAILURE
    assert s._uniform_found(np.arange(10), loss, modes_told[failed]) == (2, 7)
    assert s._uniform_found(np.arange(4, 10), loss[4:], modes_told[4:][loss[4:] >= FAILURE] - 2) == (1, 4)  # the rows a step sees


def test_the_uniform_arm_draws_while_draws_find_new_modes_and_seldom_once_they_stop():
    """With 8 modes found once each in 20 uniform draws, a harvesting point is nearly always drawn
    uniformly instead; with none in 200 draws and modes of 40 failures, seldom."""
    s = make_strategy("bo-modes", CUBE3, seed=0, ablation={"uniform": "earned"})
    rng = np.random.default_rng(0)
    s._arms = np.array([[80.0, 60.0], [0.0, 0.0], [0.0, 0.0]])
    assert np.mean([s._uniform_arm((8, 20), np.array([10.0, 12.0]), rng) for _ in range(500)]) > 0.9
    assert np.mean([s._uniform_arm((0, 200), np.array([40.0, 45.0]), rng) for _ in range(500)]) < 0.1


def test_uniform_draws_are_made_on_a_0_1_landscape_kept_in_the_state_and_resume_exactly():
    """On `PLANTED` answered 0/1, `uniform="earned"` draws some harvesting points uniformly; the
    state keeps their indices, and a strategy restored from it asks the same points next. The
    default draws none and keeps no such key."""
    options = {"budget": 120, "ablation": {"uniform": "earned"}}
    s = make_strategy("bo-modes", CUBE3, seed=0, **options)
    X = run_on(s, lambda X: PLANTED.loss(X, score=False), 20)
    assert 0 < len(s._uniform) < 60 and all(20 <= i < 80 for i in s._uniform)
    again = make_strategy("bo-modes", CUBE3, seed=0, **options)
    again.tell(X, PLANTED.loss(X, score=False))
    again.restore(s.state())
    np.testing.assert_array_equal(again.ask(4, 20), s.ask(4, 20))
    default = make_strategy("bo-modes", CUBE3, seed=0, budget=120)
    run_on(default, lambda X: PLANTED.loss(X, score=False), 20)
    assert not default._uniform and "uniform" not in default.state()
