"""The `http` target against a server that drips its answer or never sends it, over real loopback
sockets (a slow drip needs one): `timeout` bounds the whole request, and Ctrl-C stops a campaign
at once whatever its requests are waiting for, keeping the trials committed so far."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from searcher.campaign import load_campaign
from targets.http import HttpTarget

ANSWER = b'{"label": true, "score": 1.0, "boxes": []}'
DRIP_SECONDS = 20.0  # how long one dripped answer lasts at most: the old client waited it out
STOPS_WITHIN = 5.0  # seconds from SIGINT to exit: about 1 on an idle machine, more on a loaded CI runner


@pytest.fixture
def server(request):
    """A loopback server whose first `server.answered` requests get ANSWER at once and the rest
    `server.mode`: "drip" (headers, then a valid JSON body one byte every 50 ms, led by spaces)
    or "stall" (nothing at all), or "headers" (the status line and headers one byte every 50 ms).
    `server.seen` counts requests."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with server.lock:
                server.seen += 1
                slow = server.seen > server.answered and server.mode != "answer"
            body = b" " * 400 + ANSWER if slow else ANSWER
            end = time.monotonic() + DRIP_SECONDS
            if slow and server.mode == "stall":
                server.closing.wait(DRIP_SECONDS)
                return
            if slow and server.mode == "headers":
                self._drip(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"x" * 400 + b"\r\n", end)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if slow:
                self._drip(body, end)
                return
            try:
                self.wfile.write(body)
            except OSError:  # the client went away
                pass

        def _drip(self, data: bytes, end: float) -> None:
            """Sends `data` a byte every 50 ms until `end` (or the server closes, or the client goes away)."""
            try:
                for i in range(len(data)):
                    if server.closing.wait(0.05) or time.monotonic() > end:
                        return
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
            except OSError:  # the client went away
                pass

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.lock, server.closing = threading.Lock(), threading.Event()
    server.seen, server.answered, server.mode = 0, 0, "drip"
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop() -> None:
        server.closing.set()
        server.shutdown()
        server.server_close()

    request.addfinalizer(stop)
    server.url = f"http://127.0.0.1:{server.server_address[1]}/predict"
    return server


def _wait_for(condition, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("mode", ["drip", "stall", "headers"])
def test_an_answer_slower_than_the_timeout_is_a_timeout_not_a_hang(server, mode):
    """A body dripped a byte every 50 ms never trips httpx's per-read timeout; the request's
    deadline (timeout=0.5) ends it anyway, it is retried, and the image gets an error, no label."""
    server.mode = mode
    target = HttpTarget(url=server.url, timeout=0.5, retries=1, backoff=0.0)
    images = np.zeros((1, 8, 8, 3), np.uint8)
    result: list = []
    worker = threading.Thread(target=lambda: result.append(target.predict(images)), daemon=True)
    start = time.monotonic()
    worker.start()
    worker.join(8)
    assert not worker.is_alive(), "predict was still waiting for the dripped answer after 8 s"
    (pred,) = result
    assert pred.error == ["timed out after 2 attempts"] and pred.label == [None] and pred.score == [None]
    assert server.seen == 2 and time.monotonic() - start < 3.0


def test_headers_dripped_a_byte_at_a_time_end_at_the_deadline_as_a_target_error(server):
    """A status line and headers dripped a byte every 50 ms (20 s in all) never trip httpx's per-read
    timeout, and no body is read to check the deadline against; the request still ends at its
    `timeout` (0.5 s) as a target error, and the next request is not kept waiting by the abandoned one."""
    server.mode, server.answered = "headers", 0
    target = HttpTarget(url=server.url, timeout=0.5, retries=0, max_in_flight=1)
    start = time.monotonic()
    pred = target.predict(np.zeros((1, 8, 8, 3), np.uint8))
    took = time.monotonic() - start
    assert pred.error == ["timed out after 1 attempts"] and pred.label == [None]
    assert took < 0.5 + 1.0, f"the dripped headers held the request for {took:.1f} s"
    server.mode = "answer"
    start = time.monotonic()
    assert target.predict(np.ones((1, 8, 8, 3), np.uint8)).label == [True]  # a new connection, though one is still dripping
    assert time.monotonic() - start < 1.0 and server.seen == 2


PREDICT = """
import sys
import numpy as np
from targets.http import HttpTarget
target = HttpTarget(url=sys.argv[1], timeout=30, max_in_flight=4)
target.predict(np.random.default_rng(0).integers(0, 256, (4, 8, 8, 3), dtype=np.uint8))
"""


@pytest.mark.parametrize("mode", ["drip", "stall", "headers"])
def test_ctrl_c_stops_predict_while_requests_hang(server, mode):
    """SIGINT while four requests wait on a dripping or silent server ends the process within about a
    second; the old thread pool joined its stuck threads, so it lasted as long as the reads."""
    server.mode = mode
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(PREDICT), server.url], stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: server.seen == 4 or proc.poll() is not None, 60, "the four requests")
        time.sleep(0.2)  # the requests are in their reads now
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        proc.wait(timeout=DRIP_SECONDS)
        took = time.monotonic() - start
    finally:
        proc.kill()
    assert "KeyboardInterrupt" in proc.stderr.read() and proc.returncode != 0
    assert took < STOPS_WITHIN, f"the interrupted predict took {took:.1f} s to exit"


def test_ctrl_c_stops_a_campaign_on_a_dripping_api_and_it_resumes(server, tmp_path):
    """A campaign whose second batch hangs on a dripping API (timeout=30) stops within about a
    second of SIGINT, exit 130 with the resume hint and no traceback, keeping the first batch; once
    the API answers, `--resume` finishes it."""
    out = tmp_path / "hunt"
    server.answered = 4
    hunt = [sys.executable, "-m", "searcher.cli", "hunt", "--no-progress"]
    proc = subprocess.Popen([*hunt, "--generator", "planted", "--target", "http", "--option", f"url={server.url}", "--option",
                             "timeout=30", "--strategy", "random", "--budget", "8", "--batch", "4", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: server.seen == 8 or proc.poll() is not None, 90, "the second batch's requests")
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        proc.wait(timeout=DRIP_SECONDS + 10)
        took = time.monotonic() - start
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert took < STOPS_WITHIN, f"the interrupted campaign took {took:.1f} s to exit"
    assert len(load_campaign(out).trials) == 4

    server.mode = "answer"
    done = subprocess.run([*hunt, "--resume", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    trials = load_campaign(out).trials
    assert len(trials) == 8 and trials["error"].isna().all()
