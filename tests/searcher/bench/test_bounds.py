"""searcher.bench.bounds: the regions uniform points hit, what a budget split can reach, and bo-modes's schedule of roles."""

import numpy as np
import pandas as pd

from searcher.bench import bounds as bb
from searcher.strategies import make_strategy
from searcher.testing.planted import PlantedRegions


def test_expected_regions_hit_match_random_search_run_again_and_again():
    """`sum_r 1 - (1 - p_r)^n`, with the volumes estimated from uniform draws, against the mean
    regions hit by 300 seeds of the random strategy (its own draws), on a landscape with a
    categorical parameter (a region's share includes its level's)."""
    regions = PlantedRegions(dim=4, k=4, volume=0.04, seed=1, shape="ball", categories=2)
    p = bb.volumes(regions, draws=400_000)
    assert np.isclose(p.sum(), 0.04, rtol=0.05)  # the failing share of the space, levels included
    hits = [regions.regions_found(make_strategy("random", regions.space, seed=s).ask(60, 0)) for s in range(300)]
    assert abs(bb.expected_hits(p, 60) - np.mean(hits)) < 3 * np.std(hits) / np.sqrt(len(hits)) + 0.02


def test_a_bar_set_by_uniform_coverage_leaves_too_little_to_harvest():
    """The tuned case, 0/1: to hit 90% of 4.6 regions uniform points need most of the budget, and
    the rest, harvested without a miss, cannot reach 80% of a peer's 271 failures; with a peer of
    100 failures it can."""
    rows = [{"case": "planted-d6-k5", "strategy": s, "seed": 0, "budget": 400, "failures": f, "breadth": b,
             "effective_breadth": b, "first_failure": 30} for s, f, b in (("random", 14, 4.6), ("cmaes", 271, 3.8), ("bo-modes", 230, 3.2))]
    row = bb.bound(pd.DataFrame(rows), draws=200_000).loc["planted-d6-k5"]
    assert not row["possible"] and row["failures then, at most"] < row["failures bar"]
    assert 200 < row["uniform points for the breadth bar"] < 400
    assert 100 < row["bo-modes: exploring points"] < 200
    rows[1]["failures"] = 100
    assert bb.bound(pd.DataFrame(rows), draws=200_000).loc["planted-d6-k5", "possible"]


def test_discovery_counts_regions_when_first_hit_and_every_failure():
    regions, failures = bb.discovery(np.array([-1, 2, 2, -1, 0, 2, 1]))
    assert regions.tolist() == [0, 0, 1, 1, 1, 2, 2, 3]
    assert failures.tolist() == [0, 0, 1, 2, 2, 3, 4, 5]


def _runs(rows):
    return pd.DataFrame([{"case": "planted-d6-k5", "kind": "planted", "seed": 0, "budget": 400, "effective_breadth": b,
                          "strategy": s, "failures": f, "breadth": b} for s, f, b in rows])


def test_an_explorer_that_finds_the_regions_early_leaves_room_for_the_harvest():
    """Bars: 90% of 5 regions (4.5, so 5) and 80% of 250 failures (200). An explorer whose run hits
    its fifth region at point 100 leaves 300 points, enough; one that hits it at point 350 leaves
    50 beside its 20 failures, too few; one that never hits five is never within reach."""
    runs = _runs([("cmame", 20, 5), ("tpe", 250, 1), ("slow", 20, 5), ("narrow", 30, 3)])

    def curve(at):
        labels = np.full(400, -1)
        labels[np.asarray(at)] = np.arange(len(at))
        return bb.discovery(labels)

    curves = {("planted-d6-k5", "cmame", 0): curve([10, 30, 50, 70, 99]), ("planted-d6-k5", "slow", 0): curve([10, 30, 50, 70, 349]),
              ("planted-d6-k5", "narrow", 0): curve([10, 30, 50])}
    table = bb.explorer_bound(runs, curves).set_index("explorer")
    assert table.loc["cmame", "points for the breadth bar"] == 100 and table.loc["cmame", "failures then, at most"] == 305
    assert table.loc["cmame", "possible"] and not table.loc["slow", "possible"]
    assert table.loc["slow", "failures then, at most"] == 55
    assert pd.isna(table.loc["narrow", "points for the breadth bar"]) and not table.loc["narrow", "possible"]
    assert not table["as stored"].any()  # the hand-made curves found 5 and 3 failures, not the 20 and 30 stored
    text = bb.explorer_markdown(table.reset_index())
    assert "**100, 305**" in text and "never" in text and "on 1 of 1 cases" in text


def test_explorers_run_again_as_the_suite_ran_them():
    """A planted run made by the suite's own code and run again by the script: the same failures
    (so the table says "as stored"), and curves that end at the run's scores."""
    from searcher.bench import select_cases
    from searcher.bench.planted import run_planted

    case = select_cases(["planted-d6-k5"])[0]
    runs = pd.DataFrame([run_planted(case, "random", seed, 60) for seed in (0, 1)])
    curves = bb.explorer_curves(runs, ["random"])
    for seed in (0, 1):
        regions, failures = curves["planted-d6-k5", "random", seed]
        row = runs[runs["seed"] == seed].iloc[0]
        assert len(regions) == 61 and regions[-1] == row["breadth"] and failures[-1] == row["failures"]
    assert bb.explorer_bound(runs, curves)["as stored"].all()


def test_the_schedule_gives_each_point_its_role():
    """A run of 100 whose first failure is point 30: the Sobol start (20), exploring up to the
    failure, then the schedule's share of exploring points (early 0.6 before 40, late 0.15 after);
    a run without a failure explores throughout; schedule options move the roles, others do not."""
    failed = np.zeros(100, bool)
    failed[30] = True
    role = bb.schedule_roles(failed, 100)
    assert (role[:20] == "sobol").all() and (role[20:31] == "explore").all()
    s = make_strategy("bo-modes", bb.schedule(100).space, budget=100)
    assert [r == "explore" for r in role[31:]] == [s.explores(i) for i in range(31, 100)]
    assert (bb.schedule_roles(np.zeros(100, bool), 100)[20:] == "explore").all()
    assert bb.exploring_points(30, 100) == int((role != "harvest").sum())
    assert (bb.schedule_roles(failed, 100, {"late": 0.0, "ablation": {"probe": True}})[40:] == "harvest").all()
    assert (bb.schedule_roles(failed, 100, {"ablation": {"probe": True}}) == role).all()
