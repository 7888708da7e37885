"""The suite's checks on means, and how often they hold when the seeds are drawn again."""

import itertools

import numpy as np
import pandas as pd
import pytest

from searcher.bench.cases import select_cases
from searcher.bench.table import checks, resampled, summarise

CASE = "planted-d6-k5"


def _runs(per_strategy):
    """runs.csv rows for CASE: {strategy: [(failures, breadth, effective_breadth) per seed]}."""
    rows = [{"case": CASE, "kind": "planted", "strategy": s, "seed": seed, "failures": f, "repeats": 0, "breadth": b, "of": 5,
             "effective_breadth": e, "seconds": 1.0, "median_ask_s": 0.1}
            for s, scores in per_strategy.items() for seed, (f, b, e) in enumerate(scores)]
    return pd.DataFrame(rows)


def test_clear_verdicts_hold_in_every_resample():
    runs = _runs({"bo-modes": [(200, 5, 4.0), (210, 5, 4.2)], "cmaes": [(220, 2, 1.5), (230, 3, 1.6)],
                  "random": [(10, 5, 4.1), (12, 5, 3.9)]})
    assert resampled(runs, CASE, "bo-modes") == {"yield": 1.0, "breadth": 1.0, "both": 1.0}
    assert resampled(runs, CASE, "random") == {"yield": 0.0, "breadth": 1.0, "both": 0.0}  # 11 failures of cmaes's 225
    narrow = resampled(runs, CASE, "cmaes")  # its only peer is itself: no yield check, and 1.55 of 4.1 effective regions
    assert np.isnan(narrow["yield"]) and narrow["breadth"] == narrow["both"] == 0.0


def test_a_verdict_on_the_bar_is_the_draws():
    """Two seeds, 70 and 90 failures, against a peer's 100: of the four equally likely resamples
    (70, 70), (70, 90), (90, 70), (90, 90), three reach 80; the bootstrap says 75%."""
    runs = _runs({"bo-modes": [(70, 5, 4.0), (90, 5, 4.0)], "tpe": [(100, 1, 1.0)]})
    exact = np.mean([np.mean(pair) >= 80 for pair in itertools.product([70, 90], repeat=2)])
    share = resampled(runs, CASE, "bo-modes", draws=20_000)
    assert share["yield"] == pytest.approx(exact, abs=0.015) and share["breadth"] == 1.0
    assert share["both"] == share["yield"]
    assert resampled(runs, CASE, "bo-modes", draws=500, seed=3) == resampled(runs, CASE, "bo-modes", draws=500, seed=3)


def test_resamples_agree_with_the_checks_on_the_means_when_seeds_agree():
    runs = _runs({"bo-modes": [(150, 4, 3.0)] * 3, "tpe": [(200, 2, 1.2)] * 3, "random": [(10, 5, 4.5)] * 3})
    suite = summarise(runs, select_cases([CASE]), ["random", "bo-modes", "tpe"])
    check = checks(suite, CASE, "bo-modes")
    assert check["yield_ok"] is False and check["breadth_ok"] is False and check["best_peer"] == "tpe"
    assert resampled(runs, CASE, "bo-modes") == {"yield": 0.0, "breadth": 0.0, "both": 0.0}
    no_peer = resampled(runs[runs["strategy"] != "tpe"], CASE, "bo-modes")
    assert np.isnan(no_peer["yield"]) and no_peer["both"] == no_peer["breadth"] == 0.0
    assert resampled(runs, CASE, "cmame") is None
