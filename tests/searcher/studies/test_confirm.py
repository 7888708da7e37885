"""`searcher.confirm` / `searcher explain RUN --confirm`: each rule's attributes set back on the
mode's failures, everything else held, on a target whose cause is known.

The known answer: the planted pair of `conftest.py`, whose target fails in one box over (x0, x1)
and reads nothing of x2. Setting x0 or x1 back must fix every failure, and x2 (the control, or a
bound a rule picked up by chance) none.
"""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import generators
import searcher
from searcher.campaign import Campaign, load_campaign
from searcher.campaign.store import Store
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.studies.confirm import DEFAULT_BUDGET, FOLDER, SOURCE, confirm


def _stored(run) -> tuple[dict, list]:
    store = Store(run / FOLDER, readonly=True)
    try:
        return store.config, store.trials()
    finally:
        store.close()


def test_the_cause_fixes_the_failures_and_the_control_does_not(run):
    modes = searcher.confirm(run, budget=300)
    confirmed = [m for m in modes if m.interventions]
    assert len(confirmed) >= 3
    for m in confirmed:
        assert {"x0", "x1"} <= set(m.rule.rule)  # the box
        for i in m.interventions:
            low, high = i.fix_rate[1], i.fix_rate[2]
            assert low <= i.fix_rate[0] <= high and i.evaluated == i.passed + i.failed > 0
            if i.attribute in ("x0", "x1"):
                assert i.fix_rate[0] == 1.0 and not i.control  # out of the box: every failure passes
                assert low > 0.6
            else:  # x2: the control, or a bound the tree picked up by chance, is no cause
                assert i.fix_rate[0] == 0.0 and high < 0.4
        assert m.control is None or m.control.attribute == "x2"
    assert any(m.control is not None for m in confirmed)
    fixes = [i for m in confirmed for i in m.interventions if i.attribute == "x0"]
    controls = [m.control for m in confirmed if m.control is not None]
    assert min(i.fix_rate[1] for i in fixes) > max(c.fix_rate[2] for c in controls)  # the intervals apart


def test_re_renders_hold_identity_and_seed_and_change_one_attribute(tmp_path):
    """On faces (identity and render seed): the failures re-rendered unchanged are the stored images
    pixel for pixel; each intervention changes exactly one parameter, never the identity, and
    renders as stored (its step's re-renders in one batch, as the confirmation rendered them)."""
    out = tmp_path / "faces"
    Campaign(generator="faces", target="haar-face", strategy="random", budget=40, batch=20, seed=3, out=str(out),
             generator_options={"resolution": 64}).run(progress=False)
    modes = confirm(out, budget=20, min_failures=2)
    evaluated = sum(i.evaluated for m in modes for i in m.interventions)
    assert 0 < evaluated <= 20
    config, done = _stored(out)
    campaign = load_campaign(out).trials.set_index(["step", "idx"])
    gen = generators.load("faces", resolution=64)
    refs = sorted({tuple(ref) for batch in config["confirm"] for ref in batch["trials"]})
    assert len(refs) >= 2  # one batch of them, as a campaign renders (a batch of one rounds a few pixels apart)
    again = gen.generate([campaign.loc[ref, "params"] for ref in refs], seed=3).images
    with closing(Store(out, readonly=True)) as original, closing(Store(out / FOLDER, readonly=True)) as confirmed:
        for ref, image in zip(refs, again):
            assert np.array_equal(image, original.load_image(campaign.loc[ref, "image"]))  # nothing changed: the stored image
        for step, batch in enumerate(config["confirm"]):
            rows = done[done["step"] == step].sort_values("idx")
            assert (rows["source"] == SOURCE).all() and len(rows) == len(batch["trials"])
            for ref, params in zip(batch["trials"], rows["params"]):
                failure = campaign.loc[tuple(ref), "params"]
                assert {n for n in failure if failure[n] != params[n]} <= {batch["attribute"]}
                assert params[batch["attribute"]] == batch["value"] and params["identity"] == failure["identity"]
            rendered = gen.generate(list(rows["params"]), seed=3).images
            for image, digest in zip(rendered, rows["image"]):
                assert np.array_equal(image, confirmed.load_image(digest))


def test_a_generator_that_renders_otherwise_is_refused(run):
    """A failure the generator no longer renders as stored: setting one attribute back would change more."""
    trials = load_campaign(run).trials
    for digest in trials.loc[trials["loss"] >= 0.5, "image"]:
        Image.new("RGB", (3, 3), (1, 2, 3)).save(run / "images" / digest[:2] / f"{digest}.png")
    with pytest.raises(ParameterError, match="otherwise than the campaign stored it"):
        confirm(run, budget=60)
    assert not Store(run / FOLDER, readonly=True).steps()  # nothing evaluated


def test_target_errors_are_left_out_and_counted(tmp_path, planted_pair):
    run = planted_pair(tmp_path / "errors", error_rate=0.3)  # a third of the images get no answer, re-renders too
    modes = confirm(run, budget=200, min_failures=4)
    interventions = [i for m in modes for i in m.interventions]
    assert sum(i.errors for i in interventions) > 0
    _, done = _stored(tmp_path / "errors")
    assert done.loc[done["error"].notna(), "loss"].isna().all()
    for i in interventions:
        assert i.evaluated == i.passed + i.failed + i.errors + i.excluded
        n = i.passed + i.failed
        assert i.fix_rate[0] == (round(i.passed / n, 4) if n else 0.0)


@pytest.mark.parametrize("budget", [40, 97, 5000])
def test_the_budget_is_never_exceeded(run, budget):
    modes = confirm(run, budget=budget)
    _, done = _stored(run)
    assert len(done) == sum(i.evaluated for m in modes for i in m.interventions) <= budget
    for m in modes:
        sizes = {i.evaluated for i in m.interventions}
        assert len(sizes) <= 1  # every attribute of a mode re-renders the same failures
        if budget == 5000:
            assert sizes <= {m.rule.failures}  # a budget that allows it re-renders every failure
    again = confirm(run, budget=budget)  # everything is committed: nothing more is evaluated
    assert len(_stored(run)[1]) == len(done) and [m.to_dict() for m in again] == [m.to_dict() for m in modes]


def test_a_budget_too_small_or_changed_gets_one_line(run):
    with pytest.raises(ParameterError, match="give at least"):
        confirm(run, budget=2)
    assert not (run / FOLDER).exists()  # refused before anything was written
    confirm(run, budget=40)
    with pytest.raises(ParameterError, match="planned with budget 40, not 60: run it again with those"):
        confirm(run, budget=60)
    with pytest.raises(ParameterError, match="budget 40, not 60; min-failures 10, not 5"):
        confirm(run, budget=60, min_failures=5)  # more modes get a rule: another plan
    with pytest.raises(ParameterError, match="budget"):
        confirm(run, budget=0)


def _explain(run, *flags: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "searcher.cli", "explain", str(run), "--confirm", *flags],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_kill_9_resumes_to_the_same_fix_rates(tmp_path, planted_pair):
    """SIGKILL `searcher explain RUN --confirm` after its first committed step, run it again: every
    re-render stored once, and the same fix rates as a confirmation never interrupted."""
    slow = planted_pair(tmp_path / "slow", delay=0.01)  # 10 ms a target call: the kill lands mid-confirmation
    killed = shutil.copytree(slow, tmp_path / "killed")
    reference = [m.to_dict() for m in confirm(slow, budget=150)]
    proc = _explain(killed, "--confirm-budget", "150")
    db, deadline, steps = killed / FOLDER / "campaign.sqlite", time.time() + 120, 0
    while time.time() < deadline and proc.poll() is None:
        if db.exists():
            with sqlite3.connect(db) as con:
                try:
                    steps = con.execute("SELECT COUNT(*) FROM steps").fetchone()[0]
                except sqlite3.OperationalError:
                    pass
            if steps >= 1:
                break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with closing(Store(slow / FOLDER, readonly=True)) as store:
        total = len(store.steps())
    assert 1 <= steps < total  # killed after its first step, before its last
    done = _explain(killed, "--confirm-budget", "150")
    assert done.wait(timeout=120) == 0, done.stderr.read()
    resumed = json.loads((killed / "explain.json").read_text())
    assert resumed == reference
    _, a = _stored(slow)
    _, b = _stored(killed)
    assert len(b) == len(a) <= 150 and not b.duplicated(["step", "idx"]).any()
    assert b["loss"].tolist() == a["loss"].tolist() and b["params"].tolist() == a["params"].tolist()


def test_explain_json_carries_fix_rates_and_the_lines_say_them(run, capsys):
    assert main(["explain", str(run), "--confirm", "--confirm-budget", "60"]) == 0
    printed = capsys.readouterr().out
    records = json.loads((run / "explain.json").read_text())
    ruled = [r for r in records if r["rule"] is not None]
    assert ruled
    for r in records:
        assert {"fix_rates", "control", "interventions", "skipped"} <= set(r)
        if r["rule"] is None:
            assert r["fix_rates"] is None and r["control"] is None
            continue
        assert set(r["fix_rates"]) == set(r["interventions"]) and r["control"] in (None, *r["fix_rates"])
        for name, (rate, low, high) in r["fix_rates"].items():
            assert 0 <= low <= rate <= high <= 1
            if name in ("x0", "x1"):
                assert f"{name} back to" in printed
        if r["control"]:
            assert f"control {r['control']} to" in printed
    assert "of this mode's failures pass" in printed


def test_cli_flags_get_one_line_errors_and_the_documented_default(run, capsys):
    assert main(["explain", str(run), "--confirm-budget", "50"]) == 2
    assert "add --confirm" in capsys.readouterr().err
    assert main(["explain", str(run), "--confirm", "--confirm-budget", "0"]) == 2
    err = capsys.readouterr().err
    assert "--confirm-budget must be an integer >= 1" in err and err.count("\n") == 1
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    assert f"resumes included (default: {DEFAULT_BUDGET})" in " ".join(capsys.readouterr().out.split())


def test_a_latent_generator_says_it_cannot_set_an_attribute_back(tmp_path, capsys):
    """`faces-latent`'s rules are over what it rendered, which no parameter sets alone: each mode says
    so, and nothing is evaluated."""
    out = tmp_path / "latent"
    Campaign(generator="faces-latent", target="haar-face", strategy="random", budget=40, batch=20, out=str(out),
             generator_options={"resolution": 64}).run(progress=False)
    assert main(["explain", str(out), "--confirm", "--min-failures", "2"]) == 0
    records = json.loads((out / "explain.json").read_text())
    ruled = [r for r in records if r["rule"]]
    assert ruled and not (out / FOLDER).exists()
    for r in ruled:
        assert r["fix_rates"] == {} and set(r["skipped"]) == set(r["rule"])
        assert all("cannot be set alone" in why or "latent coordinate" in why for why in r["skipped"].values())
    printed = capsys.readouterr().out
    assert printed.count("not set back") >= len(ruled)


def test_an_attribute_is_set_back_to_the_middle_of_the_rules_complement_not_to_the_crowded_passes():
    """A search crowds its passes against the boundary it bisects: their median would set an
    attribute back to the mode's edge. The value is the middle of the range beyond the bound, on
    the side holding more passes; no pass outside the rule, nowhere to go."""
    from searcher.space import Categorical, Continuous, Integer
    from searcher.studies.confirm import _set_back

    hair = Continuous("hair", 0.0, 1.0)
    crowded = np.array([0.55, 0.56, 0.57, 0.58, 0.59, 0.1, 0.7])  # six below the rule [0.6, 1], one inside
    assert _set_back(hair, [0.6, 1.0], crowded) == pytest.approx(0.3)
    assert _set_back(hair, [0.3, 0.6], np.array([0.2, 0.65, 0.7, 0.9])) == pytest.approx(0.8)  # more passes above
    assert _set_back(hair, [0.6, 1.0], np.array([0.7, 0.8])) is None
    assert _set_back(Integer("age", 0, 80), [41, 80], np.array([10, 30])) == 20
    assert _set_back(Categorical("eyewear", ("none", "glasses", "sunglasses")), ["sunglasses"],
                     np.array(["glasses", "none", "glasses", "sunglasses"], object)) == "glasses"


def test_the_side_to_set_back_to_is_read_from_the_passes_of_the_modes_right_answer():
    """Failures of label "b" with h in [0.4, 0.6]. Most passes are "a" faces below 0.4; the "b"
    faces pass above 0.6. Setting h back toward the "a" passes would ask a "b" face to look like the
    others' passes; the plan sets it to the middle above the rule, where "b" passes (0.8)."""
    from searcher.analysis.explain import ModeRule
    from searcher.objective import Judge
    from searcher.space import Continuous, Space
    from searcher.studies.confirm import _plan

    space = Space([Continuous("g", 0.0, 1.0), Continuous("h", 0.0, 1.0), Continuous("k", 0.0, 1.0)])
    rows = ([(0.8, 0.45 + 0.01 * i, 0.5, 1.0) for i in range(10)]  # failures: "b" in the rule
            + [(0.8, 0.7 + 0.05 * i, 0.5, 0.0) for i in range(3)]  # "b" passes above it
            + [(0.2, 0.02 * i, 0.1 * (i % 9), 0.0) for i in range(20)])  # "a" passes below it
    trials = pd.DataFrame({"loss": [r[3] for r in rows], "error": None, "excluded": None, "step": 0, "idx": range(len(rows)),
                           "x": [list(r[:3]) for r in rows], "truth": [{"g": r[0]} for r in rows],
                           "param.g": [r[0] for r in rows], "param.h": [r[1] for r in rows], "param.k": [r[2] for r in rows]})
    modes = np.array([0] * 10 + [-1] * 23)
    rule = ModeRule(0, 10, {"g": [0.6, 1.0], "h": [0.4, 0.6]}, "", None, None)
    batches, skipped = _plan(trials, space, modes, [rule], Judge("classify", ("a", "b"), "g", 0.5), budget=100, seed=0)
    assert {b.attribute: b.value for b in batches if not b.control} == {"h": pytest.approx(0.8)}
    assert "g" in skipped[0]  # the truth it is judged by
