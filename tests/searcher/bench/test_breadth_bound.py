"""`benchmarks/breadth_bound.py`: the regions uniform points hit, and what a budget split can reach."""

import numpy as np
import pandas as pd
from project_scripts import load_script

from searcher.strategies import make_strategy
from searcher.testing.planted import PlantedRegions

SCRIPT = "benchmarks/breadth_bound.py"


def test_expected_regions_hit_match_random_search_run_again_and_again():
    """`sum_r 1 - (1 - p_r)^n`, with the volumes estimated from uniform draws, against the mean
    regions hit by 300 seeds of the random strategy (its own draws), on a landscape with a
    categorical parameter (a region's share includes its level's)."""
    bb = load_script(SCRIPT)
    regions = PlantedRegions(dim=4, k=4, volume=0.04, seed=1, shape="ball", categories=2)
    p = bb.volumes(regions, draws=400_000)
    assert np.isclose(p.sum(), 0.04, rtol=0.05)  # the failing share of the space, levels included
    hits = [regions.regions_found(make_strategy("random", regions.space, seed=s).ask(60, 0)) for s in range(300)]
    assert abs(bb.expected_hits(p, 60) - np.mean(hits)) < 3 * np.std(hits) / np.sqrt(len(hits)) + 0.02


def test_a_bar_set_by_uniform_coverage_leaves_too_little_to_harvest():
    """The tuned case, 0/1: to hit 90% of 4.6 regions uniform points need most of the budget, and
    the rest, harvested without a miss, cannot reach 80% of a peer's 271 failures; with a peer of
    100 failures it can."""
    bb = load_script(SCRIPT)
    rows = [{"case": "planted-d6-k5", "strategy": s, "seed": 0, "budget": 400, "failures": f, "breadth": b,
             "effective_breadth": b, "first_failure": 30} for s, f, b in (("random", 14, 4.6), ("cmaes", 271, 3.8), ("bo-modes", 230, 3.2))]
    row = bb.bound(pd.DataFrame(rows), draws=200_000).loc["planted-d6-k5"]
    assert not row["possible"] and row["failures then, at most"] < row["failures bar"]
    assert 200 < row["uniform points for the breadth bar"] < 400
    assert 100 < row["bo-modes: exploring points"] < 200
    rows[1]["failures"] = 100
    assert bb.bound(pd.DataFrame(rows), draws=200_000).loc["planted-d6-k5", "possible"]
