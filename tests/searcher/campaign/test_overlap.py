"""`overlap`: the next batch asked while this one is evaluated; exact under kill -9, refused where a strategy cannot take it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from killing import kill_when_stored

from searcher.bench.planted import ask_tell
from searcher.campaign import Campaign, load_campaign
from searcher.defaults import OVERLAP_AFTER
from searcher.errors import ParameterError
from searcher.strategies import make_strategy
from searcher.testing.planted import PlantedRegions

PLANTED = {"dim": 4, "k": 2, "volume": 0.2}
FAST = {"generator": "planted", "target": "planted", "generator_options": PLANTED, "target_options": PLANTED}


def _comparable(trials: pd.DataFrame) -> pd.DataFrame:
    return trials[["step", "idx", "loss", "error", "image"]].assign(x=trials["x"].map(tuple), params=trials["params"].map(str))


def _states(out) -> list[tuple[int, int, str]]:
    with sqlite3.connect(out / "campaign.sqlite") as con:
        return con.execute("SELECT step, size, state FROM steps ORDER BY step").fetchall()


def test_overlapped_resume_after_kill_equals_uninterrupted(tmp_path):
    """SIGKILL an overlapped `bo-modes` campaign twice, resume it: the same trials and the same
    stored states, pending harvest arms included, as the campaign never interrupted."""
    reference = Campaign(**FAST, strategy="bo-modes", budget=96, batch=4, seed=2, overlap=True, audit=0.25,
                         out=str(tmp_path / "ref")).run(progress=False)
    assert (reference.trials["source"] == "audit").sum() == 24  # one point a batch: never pending, never told
    assert any("pending" in json.loads(state) for _, _, state in _states(tmp_path / "ref"))  # the arms of asked points were saved
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "searcher.cli", "hunt", "--generator", "planted", "--target", "planted", "--strategy", "bo-modes",
           "--budget", "96", "--batch", "4", "--seed", "2", "--out", str(out), "--no-progress", "--overlap", "--audit", "0.25",
           *[f for k, v in PLANTED.items() for f in ("--generator-option", f"{k}={v}")],
           *[f for k, v in {**PLANTED, "delay": 0.02}.items() for f in ("--option", f"{k}={v}")]]
    kill_when_stored(subprocess.Popen(cmd, stdout=subprocess.DEVNULL), out, 50)  # overlapped from the 41st trial (`OVERLAP_AFTER`)
    kill_when_stored(subprocess.Popen([*cmd[:4], "--resume", str(out), "--no-progress"], stdout=subprocess.DEVNULL), out, 71)
    done = subprocess.run([*cmd[:4], "--resume", str(out), "--no-progress"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    resumed = load_campaign(out).trials
    assert len(resumed) == 96 and not resumed.duplicated(["step", "idx"]).any()
    pd.testing.assert_frame_equal(_comparable(resumed), _comparable(reference.trials))
    assert _states(out) == _states(tmp_path / "ref")


def test_an_overlapped_ask_never_repeats_a_pending_point_and_counts_it_asked():
    regions = PlantedRegions(**PLANTED)
    strategy = make_strategy("bo-modes", regions.space, seed=0, budget=200)
    X = strategy.ask(40, 0)
    strategy.tell(X, regions.loss(X))
    pending = strategy.ask(30, 1)
    ahead = strategy.ask(30, 2, pending=pending)
    assert not {row.tobytes() for row in ahead} & {row.tobytes() for row in pending}
    assert len({row.tobytes() for row in ahead}) == 30


def test_overlap_is_refused_for_a_strategy_that_cannot_take_it_and_leaves_torch_as_it_was(tmp_path):
    with pytest.raises(ParameterError, match=r"'sobol' strategy does not take.*random, bo-modes"):
        Campaign(**FAST, strategy="sobol", budget=8, batch=4, overlap=True, out=str(tmp_path / "s")).run(progress=False)
    assert not (tmp_path / "s").exists()
    before = torch.get_num_threads()
    result = Campaign(**FAST, strategy="random", budget=40, batch=8, overlap=True, out=str(tmp_path / "r")).run(progress=False)
    assert torch.get_num_threads() == before
    plain = Campaign(**FAST, strategy="random", budget=40, batch=8, out=str(tmp_path / "p")).run(progress=False)
    pd.testing.assert_frame_equal(_comparable(result.trials), _comparable(plain.trials))  # random search's points are the step's alone
    np.testing.assert_array_equal(result.trials["failure"], plain.trials["failure"])


def test_the_suite_overlaps_as_a_campaign_does(tmp_path):
    """`ask_tell(overlap=True)`, which the batch benchmark runs, asks the overlapped campaign's points."""
    regions = PlantedRegions(**PLANTED)
    campaign = Campaign(**FAST, strategy="bo-modes", budget=120, batch=8, seed=3, overlap=True, out=str(tmp_path / "c")).run(progress=False)
    X, _ = ask_tell(make_strategy("bo-modes", regions.space, seed=3, budget=120), regions.loss, 120, 8, overlap=True)
    np.testing.assert_array_equal(np.stack(campaign.trials["x"].map(np.asarray)), X)
    plain, _ = ask_tell(make_strategy("bo-modes", regions.space, seed=3, budget=120), regions.loss, 120, 8)
    first = 8 * (OVERLAP_AFTER + 1)  # the first batch asked ahead
    np.testing.assert_array_equal(plain[:first], X[:first])
    assert len({x.tobytes() for x in X}) == 120 and not np.array_equal(plain[first:], X[first:])  # one batch behind: other points
