"""A target's spending cap holds across resumes: what it spent lives in the campaign store.

The `http` target against a loopback server that counts what it is sent: a cap of 10 paid requests
stays 10 however often the campaign is resumed, and a resume with a raised cap spends up to the new
cap and no more.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import searcher
from searcher.campaign import Campaign, load_campaign
from searcher.campaign.store import Store
from searcher.cli import main
from searcher.errors import ParameterError

HUNT = {"generator": "planted", "strategy": "random", "batch": 4, "seed": 2}


@pytest.fixture
def api(request):
    """A paid API on loopback: answers every request (the label from the image's bytes) and counts them."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with server.lock:
                server.requests += 1
            reply = json.dumps({"label": hashlib.sha256(body).digest()[0] % 3 != 0, "score": 1.0, "boxes": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.requests, server.lock = 0, threading.Lock()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    request.addfinalizer(server.shutdown)
    server.url = f"http://127.0.0.1:{server.server_address[1]}/predict"
    return server


def _options(api, cap: float) -> dict:
    return {"url": api.url, "cost_per_call": 1, "budget": cap, "retries": 0}


def test_the_spending_cap_holds_across_resumes_and_a_raised_cap_continues(api, tmp_path, capsys):
    out = tmp_path / "paid"
    campaign = Campaign(**HUNT, target="http", target_options=_options(api, 10), budget=40, out=str(out))
    with pytest.raises(ParameterError) as stopped:
        campaign.run(progress=False)
    message = str(stopped.value)
    assert "spending cap reached (10 of 10)" in message, message
    assert "'budget'" in message and "its URL, its key" not in message
    assert api.requests == 10

    for _ in range(2):  # resumed as it was: nothing more is sent, and the message says why
        with pytest.raises(ParameterError, match=r"spending cap reached \(10 of 10\)"):
            Campaign.from_dir(out).run(progress=False, resume=True)
        assert api.requests == 10
    assert main(["hunt", "--resume", str(out), "--no-progress"]) == 2  # the command line says the same, without a traceback
    assert "spending cap reached (10 of 10)" in capsys.readouterr().err
    assert api.requests == 10

    trials = load_campaign(out).trials
    assert len(trials) == 10 and trials["error"].isna().all() and not trials[["step", "idx"]].duplicated().any()
    store = Store(out)
    assert store.spending == {"local": {"requests": 10, "spent": 10.0, "budget": 10.0, "cost_per_call": 1.0}}
    store.close()

    raised = dataclasses.replace(Campaign.from_dir(out), target_options=_options(api, 18))
    with pytest.raises(ParameterError, match=r"spending cap reached \(18 of 18\)"):
        raised.run(progress=False, resume=True)
    assert api.requests == 18
    trials = load_campaign(out).trials
    assert len(trials) == 18 and trials["error"].isna().all() and not trials[["step", "idx"]].duplicated().any()
    assert load_campaign(out).config["target_options"]["budget"] == 18, "the raised cap is the stored one now"
    assert main(["hunt", "--resume", str(out), "--option", "budget=20", "--no-progress"]) == 2  # the command line raises it too
    assert "spending cap reached (20 of 20)" in capsys.readouterr().err and api.requests == 20
    assert main(["hunt", "--resume", str(out), "--option", "cost_per_call=0.5", "--no-progress"]) == 2  # any other change: refused
    assert "another configuration" in capsys.readouterr().err and api.requests == 20

    trials = load_campaign(out).trials
    reference = Campaign(**HUNT, target="http", target_options=_options(api, 100), budget=20, out=str(tmp_path / "ref")).run(progress=False).trials
    cols = ["step", "idx", "loss", "image"]
    assert set(trials["loss"]) == {0.0, 1.0}, "the server's answers should hold both hits and misses"
    assert trials[cols].reset_index(drop=True).equals(reference[cols].reset_index(drop=True)), "the capped, resumed run asked what a free one asks"


def test_only_the_cap_of_a_stored_campaign_may_change_on_resume(api, tmp_path):
    out = tmp_path / "paid"
    with pytest.raises(ParameterError):
        Campaign(**HUNT, target="http", target_options=_options(api, 4), budget=8, out=str(out)).run(progress=False)
    changed = dataclasses.replace(Campaign.from_dir(out),
                                  target_options={**_options(api, 8), "cost_per_call": 0.5})
    with pytest.raises(ParameterError, match="another configuration"):
        changed.run(progress=False, resume=True)
    assert api.requests == 4


def test_a_target_without_spending_stores_none(tmp_path):
    out = tmp_path / "free"
    Campaign(**HUNT, target="planted", budget=8, out=str(out)).run(progress=False)
    store = Store(out)
    assert store.spending is None
    store.close()


def test_a_studys_re_renders_count_against_the_campaigns_cap(api, tmp_path, capsys):
    """`explain --confirm` and `--probe` ask the campaign's paid target again: their requests count
    with the campaign's against its cap, across their own resumes, and stop them in one line."""
    out = tmp_path / "paid"
    Campaign(**HUNT, target="http", target_options=_options(api, 52), budget=40, out=str(out)).run(progress=False)
    assert api.requests == 40
    with pytest.raises(ParameterError, match="spending cap is reached"):
        searcher.confirm(out, budget=100, min_failures=1)
    assert api.requests == 52  # 12 re-renders, then the cap
    assert main(["explain", str(out), "--confirm", "--confirm-budget", "100", "--min-failures", "1"]) == 2
    assert "spending cap is reached" in capsys.readouterr().err and api.requests == 52  # a resume sends nothing more
    with pytest.raises(ParameterError, match="spending cap is reached"):
        searcher.probe(out, budget=100, min_failures=1)
    assert api.requests == 52
    assert main(["hunt", "--resume", str(out), "--option", "budget=1000", "--no-progress"]) == 0  # the cap raised
    modes = searcher.confirm(out, budget=100, min_failures=1)
    with closing(Store(out / "confirm", readonly=True)) as store:
        stored = len(store.trials())
    assert stored == sum(i.evaluated for m in modes for i in m.interventions) == api.requests - 40 <= 100
