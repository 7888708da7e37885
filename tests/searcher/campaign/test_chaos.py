"""Chaos: a campaign against `searcher serve-target` answering 503s, late answers and truncated
bodies, killed with SIGKILL at seeded random moments and resumed until done, ends with every trial
stored once, no error counted as a failure, every error retried at most `--retries` times, and the
same judgement as a clean run wherever the service answered."""

import base64
import errno
import hashlib
import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import targets
from searcher.campaign import Campaign, load_campaign
from searcher.campaign.loop import run_or_resume
from searcher.campaign.store import Store, image_file
from searcher.cli import main
from searcher.errors import SearcherError

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


@pytest.mark.slow  # faces through `searcher serve-target`, about 100 s; the planted tests below cover the same faults in CI
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


# ---------------------------------------------------------------------- trial for trial, under a spending cap

PLANTED = None  # the planted target the fault server judges with, built once
MAX_FAULTS = (0, 0, 0, 0, 1, 2)  # leading faulty attempts of an image, drawn by its first hash byte
SLOW = 0.6  # seconds a slow answer takes: twice the target's timeout
HTTP = {"timeout": 0.3, "backoff": 0, "cost_per_call": 1}
COLUMNS = ["step", "idx", "x", "params", "loss", "label", "error"]


@pytest.fixture
def fault_api(request):
    """`fault_api(*kinds)`: a loopback paid API that judges each image with the planted target and
    answers its first 0-2 attempts (how many, and which of `kinds` — "5xx", "slow", "bad json" —
    drawn from the hash of the request and the attempt's number) wrong. Faults depend on what is
    asked and how often, never on timing, so a killed and resumed campaign meets the same ones as a
    clean run, and every image is answered once it is asked often enough. `.requests` counts all."""

    def start(*kinds: str):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                digest = hashlib.sha256(body).digest()
                with server.lock:
                    attempt = server.seen.get(digest, 0)
                    server.seen[digest], server.requests = attempt + 1, server.requests + 1
                fault = kinds[digest[1 + attempt] % len(kinds)] if attempt < MAX_FAULTS[digest[0] % len(MAX_FAULTS)] else None
                if fault == "5xx":
                    return self._reply(503, b'{"error": "busy"}')
                image = np.asarray(Image.open(io.BytesIO(base64.b64decode(json.loads(body)["image"]))).convert("RGB"))
                pred = PLANTED.predict(image[None])
                answer = json.dumps({"label": pred.label[0], "score": pred.score[0], "boxes": []}).encode()
                if fault == "slow":
                    time.sleep(SLOW)
                self._reply(200, answer[: len(answer) // 2] if fault == "bad json" else answer)

            def _reply(self, status: int, content: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                except OSError:  # the client timed out and left
                    pass

            def log_message(self, *args) -> None:
                pass

        global PLANTED
        PLANTED = PLANTED or targets.load("planted", score=True)
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.seen, server.requests, server.lock = {}, 0, threading.Lock()
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        request.addfinalizer(server.shutdown)
        server.url = f"http://127.0.0.1:{server.server_address[1]}/predict"
        return server

    return start


def _steps(out) -> int:
    """Batches committed so far (0 before the store exists)."""
    try:
        with closing(sqlite3.connect(f"file:{out / 'campaign.sqlite'}?mode=ro", uri=True)) as db:
            return db.execute("SELECT COUNT(*) FROM steps").fetchone()[0]
    except sqlite3.Error:
        return 0


def _recorded(out) -> int:
    """The paid requests the store says were sent: what a resume counts against the cap."""
    with closing(Store(out, readonly=True)) as store:
        return store.spending["local"]["requests"]


def _full_disk_at(monkeypatch, n: int) -> None:
    """The n-th image the store writes from now on fails as on a full disk."""
    write, calls = Store._save_image, []

    def save(self, image):
        calls.append(1)
        if len(calls) == n:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(self, image)

    monkeypatch.setattr(Store, "_save_image", save)


def _whole(out) -> pd.DataFrame:
    """The stored trials, each once and with its image on disk (nothing stored half)."""
    trials = load_campaign(out).trials
    assert not trials[["step", "idx"]].duplicated().any()
    assert all(image_file(out, digest).is_file() for digest in trials["image"].dropna())
    return trials


def _records(trials: pd.DataFrame) -> list[dict]:
    return trials[COLUMNS].reset_index(drop=True).to_dict("records")


def test_kill_9_full_disk_and_http_faults_resume_to_the_uninterrupted_run_within_the_cap(tmp_path, fault_api, monkeypatch, capsys):
    """A paid API (a cap of 72 requests) answering 503s, late answers and truncated JSON; the campaign
    SIGKILLed at three seeded moments and resumed until the cap stops it: the API saw at most 72
    requests, and the store never counted fewer than it saw. Then a resume that raises the cap meets
    a full disk: one line, no traceback, nothing stored half; resumed until done, it holds the trials
    of a clean run against the same faults, trial for trial."""
    chaos, clean = fault_api("5xx", "slow", "bad json"), fault_api("5xx", "slow", "bad json")
    out, rng, cap = tmp_path / "chaos", random.Random(7), 72
    args = ["--generator", "planted", "--strategy", "random", "--budget", "64", "--batch", "4", "--seed", "3", "--retries", "3",
            "--target", "http", *[f for k, v in {**HTTP, "retries": 1}.items() for f in ("--option", f"{k}={v}")]]
    proc, kills = _hunt(*args, "--option", f"url={chaos.url}", "--option", f"budget={cap}", "--out", str(out)), 0
    while True:
        if kills < 3:
            until, deadline = _steps(out) + rng.randint(1, 2), time.monotonic() + 90
            while _steps(out) < until and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.05))  # after a commit, often mid-batch
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                kills += 1
                assert chaos.requests <= _recorded(out) <= cap, "a kill -9 gave back requests that were sent"
                proc = _hunt("--resume", str(out))
                continue
        proc.wait(timeout=120)
        err = proc.stderr.read()
        if "spending cap reached" in err:
            break
        assert proc.returncode == 2 and "got no answer" in err, err  # a batch of faults only: resumed, it asks again
        proc = _hunt("--resume", str(out))
    assert kills == 3 and proc.returncode == 2
    assert chaos.requests <= _recorded(out) <= cap
    assert main(["hunt", "--resume", str(out), "--no-progress"]) == 2  # resumed as it is: nothing more is sent
    assert "spending cap reached" in capsys.readouterr().err and chaos.requests <= cap

    _full_disk_at(monkeypatch, rng.randint(1, 6))
    assert main(["hunt", "--resume", str(out), "--option", "budget=1000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "the disk is full" in err and "Traceback" not in err and err.count("\n") == 1, err
    monkeypatch.undo()
    _whole(out)
    assert chaos.requests <= _recorded(out)
    for _ in range(10):  # errors (a run of faults on one image) are asked again by each resume, up to --retries
        code = main(["hunt", "--resume", str(out), "--no-progress"])
        if code == 0 and load_campaign(out).trials["error"].isna().all():
            break
    trials = _whole(out)

    ref = tmp_path / "clean"
    reference = Campaign(generator="planted", strategy="random", budget=64, batch=4, seed=3, retries=3, target="http",
                         target_options={**HTTP, "retries": 1, "url": clean.url, "budget": 1000}, out=str(ref))
    reference.run(progress=False)
    while load_campaign(ref).trials["error"].notna().any():
        reference.run(progress=False, resume=True)
    expected = load_campaign(ref).trials
    assert len(trials) == 64 and trials["error"].isna().all()
    assert _records(trials) == _records(expected)
    assert chaos.requests <= _recorded(out) and clean.requests > 64  # faults were met and paid for


def test_bo_resumed_after_full_disks_mid_batch_equals_the_uninterrupted_run(tmp_path, fault_api, monkeypatch):
    """A model-based strategy, whose state is what a resume could get wrong: full disks stop two runs
    mid-batch against an API answering 503s and late answers, and the resumed campaign asks and
    stores exactly what a clean run does."""
    chaos, clean = fault_api("5xx", "slow"), fault_api("5xx", "slow")
    settings = {"generator": "planted", "strategy": "bo", "budget": 16, "batch": 4, "seed": 1, "target": "http"}
    campaign = Campaign(**settings, target_options={**HTTP, "retries": 2, "url": chaos.url}, out=str(tmp_path / "chaos"))
    for n in (6, 3):  # the 6th image of the first run, the 3rd of the resumed one
        _full_disk_at(monkeypatch, n)
        with pytest.raises(SearcherError, match="the disk is full"):
            run_or_resume(campaign, progress=False)
        monkeypatch.undo()
        assert chaos.requests <= _recorded(campaign.out)
    run_or_resume(campaign, progress=False)
    reference = Campaign(**settings, target_options={**HTTP, "retries": 2, "url": clean.url}, out=str(tmp_path / "clean")).run(progress=False)
    trials = _whole(tmp_path / "chaos")
    assert trials["error"].isna().all() and len(trials) == 16
    assert _records(trials) == _records(reference.trials)
