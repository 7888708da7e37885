"""Chaos: a campaign against `searcher serve-target` answering 503s, late answers and truncated
bodies, killed with SIGKILL at seeded random moments and resumed until done, ends with every trial
stored once, no error counted as a failure, every error retried at most `--retries` times, and the
same judgement as a clean run wherever the service answered."""

import os
import random
import signal
import sqlite3
import subprocess
import sys

import numpy as np

from searcher.campaign import load_campaign

FAULTS = ["--fail-rate", "0.2", "--slow-rate", "0.05", "--slow-seconds", "2", "--malformed-rate", "0.1", "--fault-seed", "5"]
BUDGET, RETRIES = 32, 2


def _hunt(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "searcher.cli", "hunt", *args, "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _stored(out) -> bool:
    """Whether the campaign got as far as storing its configuration (a kill during start-up leaves none)."""
    if not (out / "campaign.sqlite").is_file():
        return False
    with sqlite3.connect(out / "campaign.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM meta WHERE key = 'config'").fetchone()[0] == 1


def test_kills_and_faults_lose_nothing_and_count_no_error_as_a_failure(tmp_path, serve_target):
    url = serve_target("haar-face", *FAULTS)
    out = tmp_path / "chaos"
    common = ["--generator", "faces", "--generator-option", "resolution=64", "--strategy", "random", "--budget", str(BUDGET),
              "--batch", "4", "--seed", "0"]
    start = [*common, "--target", "http", "--option", f"url={url}", "--option", "timeout=1", "--option", "retries=0",
             "--retries", str(RETRIES), "--out", str(out)]
    rng, kills, proc = random.Random(0), 0, _hunt(*start)
    for _ in range(30):  # kill at random moments while trials remain, then let one run finish
        try:
            proc.wait(timeout=rng.uniform(0.5, 2.5) if kills < 4 else 120)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
        else:
            if proc.returncode == 0:
                break
            assert proc.returncode == 2 and "the rest of the budget was not spent" in proc.stderr.read()  # a batch of faults only
        proc = _hunt("--resume", str(out)) if _stored(out) else _hunt(*start)  # killed before it stored anything: start again
    assert kills >= 1
    for _ in range(RETRIES):  # the errors of the last run get their retries too
        done = _hunt("--resume", str(out))
        assert done.wait(timeout=120) == 0, done.stderr.read()

    chaos = load_campaign(out).trials
    assert len(chaos) == BUDGET and not chaos[["step", "idx"]].duplicated().any()
    errors = chaos["error"].notna()
    assert chaos.loc[errors, "failure"].isna().all() and chaos.loc[errors, "loss"].isna().all()
    assert (chaos["attempts"] <= RETRIES + 1).all() and (chaos.loc[errors, "attempts"] == RETRIES + 1).all()
    assert chaos["attempts"].max() > 1  # faults happened and were retried

    clean = _hunt(*common, "--target", "haar-face", "--out", str(tmp_path / "clean"))
    assert clean.wait(timeout=120) == 0, clean.stderr.read()
    reference = load_campaign(tmp_path / "clean").trials
    answered = ~errors.to_numpy()
    assert np.array_equal(np.stack(chaos["x"]), np.stack(reference["x"]))  # the same points, kills and all
    assert chaos["loss"].to_numpy()[answered].tolist() == reference["loss"].to_numpy()[answered].tolist()
