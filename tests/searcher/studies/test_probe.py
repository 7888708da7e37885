"""`searcher.probe` / `searcher explain RUN --probe`: each mode's extent measured by moving one
parameter at a time from its central failures, against answers known in advance.

The bisection alone runs against a function whose failure region is written down; the study runs
the planted pair of `conftest.py` (one box over (x0, x1); x2 changes nothing the target reads),
whose box the target itself holds.
"""

import json
import shutil
import sqlite3
from contextlib import closing

import numpy as np
import pytest

import searcher
from searcher.analysis.probe import Bisection, central
from searcher.campaign.store import Store
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.space import Categorical, Continuous, Integer, Space
from searcher.studies.probe import DEFAULT_BUDGET, FOLDER, SOURCE, probe


def _answer(rows):
    """Fails inside a ∈ [0.2, 0.7], n ∈ [3, 6], c ∈ {p, q}; b anywhere (never a side)."""
    return [0.2 <= r["a"] <= 0.7 and 3 <= r["n"] <= 6 and r["c"] in ("p", "q") for r in rows]


def test_bisection_finds_every_side_and_leaves_open_what_never_passes():
    space = Space([Continuous("a", 0.0, 1.0), Continuous("b", -5.0, 5.0), Integer("n", 0, 10), Categorical("c", ("p", "q", "r"))])
    b = Bisection([{"a": 0.5, "b": 1.0, "n": 4, "c": "p"}, {"a": 0.3, "b": -2.0, "n": 5, "c": "q"}], space, space.names, steps=8)
    asked = 0
    while not b.done():
        rows = b.rows()
        asked += len(rows)
        b.tell(_answer(rows))
    rule = b.rule()
    assert set(rule) == {"a", "n", "c"}  # b fails everywhere: open on both sides, left out
    assert rule["a"][0] == pytest.approx(0.2, abs=0.005) and rule["a"][1] == pytest.approx(0.7, abs=0.005)
    assert rule["n"] == [3, 6] and all(isinstance(v, int) for v in rule["n"])
    assert rule["c"] == ["p", "q"]
    # per start: 2 ends + up to 2 x 8 halvings for a and b (b stops at its open ends), n's whole-number halvings, 2 levels
    assert asked <= 2 * (2 * 2 * 9 + 2 * 9 + 2)


def test_central_starts_are_the_failures_nearest_the_median():
    X = np.array([[0.0, 0.0], [0.5, 0.5], [0.52, 0.5], [1.0, 1.0], [0.9, 0.1]])
    assert central(X, np.array([0, 1, 2, 3]), 1).tolist() in ([1], [2])
    assert set(central(X, np.array([0, 1, 2, 3]), 2).tolist()) == {1, 2}


def test_the_probed_rule_is_the_planted_box(run, planted_box):
    lower, upper = planted_box
    modes = searcher.probe(run, budget=400)
    probed = [m for m in modes if m.probed is not None]
    assert len(probed) >= 2
    for m in probed:
        rule = m.probed.rule
        assert set(rule) == {"x0", "x1"}  # x2 changes nothing the target reads: never a side
        for d, name in enumerate(("x0", "x1")):
            assert rule[name][0] == pytest.approx(lower[d], abs=0.01) and rule[name][1] == pytest.approx(upper[d], abs=0.01)
        assert m.probed.precision[0] > 0.95 and m.probed.coverage[0] == 1.0
        assert m.evaluated > 0 and m.errors == 0 and len(m.starts) == 1
    for m in modes:
        assert (m.probed is None) == (m.skipped is not None)


def test_stored_like_trials_within_budget_and_replayed_on_a_second_run(run):
    modes = probe(run, budget=100)
    with closing(Store(run / FOLDER, readonly=True)) as store:
        done, config = store.trials(), store.config
    assert 0 < len(done) == sum(m.evaluated for m in modes) <= 100
    assert (done["source"] == SOURCE).all() and config["options"]["budget"] == 100
    assert any("budget" in (m.skipped or "") for m in modes)  # the rest did not fit
    again = probe(run, budget=100)
    with closing(Store(run / FOLDER, readonly=True)) as store:
        assert len(store.trials()) == len(done)  # nothing evaluated twice
    assert [m.to_dict() for m in again] == [m.to_dict() for m in modes]


def test_a_probe_cut_short_resumes_to_the_same_rules(run, tmp_path):
    """A probe whose last rounds never committed (a kill mid-round: trials of an open step, no
    later ones) evaluates only what is missing, to the same rules."""
    reference = [m.to_dict() for m in probe(run, budget=200)]
    cut = shutil.copytree(run, tmp_path / "cut")
    with closing(sqlite3.connect(cut / FOLDER / "campaign.sqlite")) as con, con:
        last = con.execute("SELECT MAX(step) FROM steps").fetchone()[0]
        con.execute("DELETE FROM steps WHERE step >= 2")
        con.execute("DELETE FROM trials WHERE step > 2 OR (step = 2 AND idx % 2 = 0)")
    assert last > 2
    assert [m.to_dict() for m in probe(cut, budget=200)] == reference
    with closing(Store(run / FOLDER, readonly=True)) as a, closing(Store(cut / FOLDER, readonly=True)) as b:
        x, y = a.trials(), b.trials()
    assert len(x) == len(y) and x["params"].tolist() == y["params"].tolist()


def test_bad_budgets_and_changed_plans_get_one_line(run):
    with pytest.raises(ParameterError, match="pays for no mode"):
        probe(run, budget=5)
    assert not (run / FOLDER).exists()  # refused before anything was written
    probe(run, budget=60)  # one mode
    probe(run, budget=80)  # the same plan: read back, nothing evaluated
    with pytest.raises(ParameterError, match="budget 60, not 200: run it again with those"):
        probe(run, budget=200)  # more modes: another plan, never mixed in
    for bad in ({"budget": 0}, {"starts": 0}, {"steps": 0}):
        with pytest.raises(ParameterError):
            probe(run, **bad)


def test_target_errors_are_counted_and_never_widen_a_rule(tmp_path, planted_pair, planted_box):
    lower, upper = planted_box
    run = planted_pair(tmp_path / "errors", error_rate=0.3)
    modes = [m for m in probe(run, budget=300, min_failures=4) if m.probed is not None]
    assert sum(m.errors for m in modes) > 0
    for m in modes:
        for d, name in enumerate(("x0", "x1")):
            low, high = m.probed.rule.get(name, [0.0, 1.0])
            assert low >= lower[d] - 0.01 and high <= upper[d] + 0.01


def test_cli_writes_the_probed_rules_into_explain_json(run, capsys):
    assert main(["explain", str(run), "--probe", "--probe-budget", "100"]) == 0
    out = capsys.readouterr().out
    records = json.loads((run / "explain.json").read_text())
    probed = [r for r in records if r["probe"].get("rule")]
    assert probed and all(set(r["probe"]["rule"]) == {"x0", "x1"} for r in probed)
    assert "measured" in out and probed[0]["probe"]["caption"] in out
    assert main(["explain", str(run), "--probe-budget", "100"]) == 2  # the budget without --probe
    assert "--probe" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    assert f"resumes included (default: {DEFAULT_BUDGET})" in " ".join(capsys.readouterr().out.split())
