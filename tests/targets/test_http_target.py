"""The `http` target against real HTTP over loopback: `searcher serve-target` in a subprocess, and a
canned-answer server in a thread for what the real one never says."""

from __future__ import annotations

import base64
import io
import json
import struct
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import numpy as np
import pytest

import generators
import targets
from searcher.cli import main
from searcher.errors import ParameterError, TargetError
from searcher.serve import create_app
from searcher.testing import CallableTarget, check_target
from targets.http import BUDGET_EXHAUSTED, HttpTarget

FAULTS = ["--fail-rate", "0.2", "--slow-rate", "0.1", "--slow-seconds", "3", "--malformed-rate", "0.1", "--fault-seed", "3"]


@pytest.fixture(scope="module")
def url(serve_target) -> str:
    return serve_target("dlib-hog")


@pytest.fixture(scope="module")
def faulty_url(serve_target) -> str:
    return serve_target("dlib-hog", *FAULTS)


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    gen = generators.load("faces")
    return gen.generate(gen.space.sample(12, seed=0)).images


@pytest.fixture(scope="module")
def local(images):
    return targets.load("dlib-hog").predict(images)


def _health(url: str) -> dict:
    return httpx.get(url.replace("/predict", "/health")).json()


def test_predictions_over_http_equal_the_local_target(url, images, local):
    pred = HttpTarget(url=url).predict(images)
    assert pred.error == [None] * 12
    assert pred.label == local.label and pred.score == local.score and pred.boxes == local.boxes
    assert any(local.label) and not all(local.label), "the renders should hold both hits and misses"


@pytest.mark.parametrize("send", ["raw", "multipart"])
def test_every_body_encoding_reaches_the_server(url, images, local, send):
    pred = HttpTarget(url=url, send=send).predict(images[:3])
    assert pred.label == local.label[:3] and pred.boxes == local.boxes[:3]


def test_http_target_passes_the_conformance_suite(url):
    check_target(HttpTarget(url=url))


def test_faults_become_error_outcomes_never_wrong_labels(faulty_url, images, local):
    target = HttpTarget(url=faulty_url, timeout=1.0, retries=3, backoff=0.01)
    pred = target.predict(images)
    health = _health(faulty_url)
    assert all(health["faults"].values()), f"the seeded faults should include every kind: {health}"
    assert target.requests_sent == health["requests"] > len(images), "503s and timeouts are retried"
    for i, err in enumerate(pred.error):
        if err is None:
            assert (pred.label[i], pred.score[i], pred.boxes[i]) == (local.label[i], local.score[i], local.boxes[i])
        else:
            assert pred.label[i] is None and pred.score[i] is None and pred.boxes[i] == []
            assert err == "malformed JSON response" or err.endswith("after 4 attempts"), err
    assert pred.error.count("malformed JSON response") == health["faults"]["malformed"]


def test_cached_images_are_never_requested_again(url, images, local, tmp_path):
    target = HttpTarget(url=url, cache_dir=tmp_path)
    first = target.predict(np.concatenate([images, images[:3]]))  # duplicates in a batch go out once
    assert target.requests_sent == 12
    target.close()  # a closed target opens new connections when it needs them
    again = target.predict(images[::-1])
    assert target.requests_sent == 12 and again.label == first.label[:12][::-1]
    assert len(list(tmp_path.glob("*.json"))) == 12 and not list(tmp_path.glob(".*"))

    fresh = HttpTarget(url=url, cache_dir=tmp_path)
    pred = fresh.predict(images)
    assert fresh.requests_sent == 0
    assert pred.label == local.label and pred.score == local.score and pred.boxes == local.boxes
    other = HttpTarget(url=url, cache_dir=tmp_path, send="raw")
    other.predict(images[:2])
    assert other.requests_sent == 2, "another request configuration keys its own answers"


def test_budget_stops_cleanly(url, images, local):
    target = HttpTarget(url=url, cost_per_call=1, budget=5)
    pred = target.predict(images)
    assert target.requests_sent == 5 and target.spent == 5.0 and target.exhausted
    answered = [i for i, e in enumerate(pred.error) if e is None]
    assert len(answered) == 5 and all(pred.label[i] == local.label[i] for i in answered)
    assert all(pred.error[i] == BUDGET_EXHAUSTED and pred.label[i] is None for i in range(12) if i not in answered)
    assert target.predict(images[answered]).error == [None] * 5, "cached answers cost nothing"
    assert target.requests_sent == 5


def test_rate_limit_spaces_requests(url, images):
    target = HttpTarget(url=url, rate_limit=20, max_in_flight=4)
    start = time.perf_counter()
    target.predict(images[:6])
    assert time.perf_counter() - start >= 5 / 20


# ------------------------------------------------------------------ a canned-answer server


@pytest.fixture
def canned(request):
    """A loopback server answering every request with `server.reply = (status, body)`; records headers and paths."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            server.seen.append(dict(self.headers))
            server.paths.append(self.path)
            status, body = server.reply
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.seen, server.paths, server.reply = [], [], (200, "{}")
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    request.addfinalizer(server.shutdown)
    server.url = f"http://127.0.0.1:{server.server_address[1]}/predict"
    return server


def test_secrets_are_read_at_request_time_and_never_shown(canned, images, monkeypatch):
    secret = "s3cr3t-token-value"
    monkeypatch.delenv("SEARCHER_TEST_TOKEN", raising=False)
    target = HttpTarget(url=canned.url, headers={"Authorization": "env:SEARCHER_TEST_TOKEN", "X-Key": "literal-key"}, retries=0)
    with pytest.raises(TargetError, match="'SEARCHER_TEST_TOKEN', which is not set") as missing:
        target.predict(images[:1])
    monkeypatch.setenv("SEARCHER_TEST_TOKEN", secret)
    canned.reply = (401, '{"error": "bad token"}')
    pred = target.predict(images[:1])
    assert canned.seen[-1]["Authorization"] == secret and canned.seen[-1]["X-Key"] == "literal-key"
    assert pred.error == ["HTTP 401"] and pred.label == [None]
    shown = repr(target) + str(missing.value) + repr(vars(target)) + repr(pred)
    assert secret not in shown and "literal-key" not in repr(target) and "env:SEARCHER_TEST_TOKEN" in repr(target)


def test_retries_give_up_with_a_reason(canned, images, unused_port):
    canned.reply = (429, "{}")
    target = HttpTarget(url=canned.url, retries=2, backoff=0.01)
    assert target.predict(images[:1]).error == ["HTTP 429 after 3 attempts"] and len(canned.seen) == 3
    closed = HttpTarget(url=f"http://127.0.0.1:{unused_port}/predict", retries=1, backoff=0.01)
    assert closed.predict(images[:1]).error == ["connection failed after 2 attempts"]


@pytest.mark.parametrize(
    "body, error",
    [
        ('{"score": 1, "boxes": []}', "response lacks 'label'"),
        ('{"label": "yes", "score": 1, "boxes": []}', "response label 'yes' is not true or false"),
        ('{"label": true, "score": "high", "boxes": []}', "response score 'high' is not a number"),
        ('{"label": true, "score": 1, "boxes": [[1, 2]]}', "response boxes [[1, 2]] are not [[x0, y0, x1, y1], ...]"),
        ("<html>oops</html>", "malformed JSON response"),
    ],
)
def test_unreadable_answers_are_errors(canned, images, body, error):
    canned.reply = (200, body)
    pred = HttpTarget(url=canned.url).predict(images[:2])
    assert pred.error == [error, error] and pred.label == [None, None]


def test_classify_reads_nested_paths_and_checks_labels(canned, images):
    canned.reply = (200, json.dumps({"result": [{"class": "cat", "p": 0.9}]}))
    target = HttpTarget(url=canned.url, task="classify", labels=["cat", "dog"], label_path="result.0.class", score_path="result.0.p", boxes_path=None)
    pred = target.predict(images[:1])
    assert (pred.label, pred.score, pred.error) == (["cat"], [0.9], [None])
    canned.reply = (200, json.dumps({"result": [{"class": "cow", "p": 0.9}]}))
    assert target.predict(images[1:2]).error == ["response label 'cow' is not one of the declared labels"]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"url": "ftp://example.invalid/x"}, "The 'url' option must be an http:// or https:// address. Got 'ftp://example.invalid/x' instead."),
        ({"method": "GET"}, "The 'method' option must be one of 'POST', 'PUT', 'PATCH'. Got 'GET' instead."),
        ({"send": "xml"}, "The 'send' option must be one of 'base64-json', 'raw', 'multipart'. Got 'xml' instead."),
        ({"task": "verify"}, "The 'task' option must be one of 'detect', 'classify'. Got 'verify' instead."),
        ({"task": "classify"}, "The 'labels' option must be a non-empty list of distinct labels"),
        ({"labels": ["a"]}, "The 'labels' option applies to task='classify' only"),
        ({"timeout": -1}, "The 'timeout' option must be a number > 0. Got -1 instead."),
        ({"max_in_flight": 0}, "The 'max_in_flight' option must be an integer >= 1. Got 0 instead."),
        ({"retries": 1.5}, "The 'retries' option must be an integer >= 0. Got 1.5 instead."),
        ({"rate_limit": 0}, "The 'rate_limit' option must be a number > 0. Got 0 instead."),
        ({"budget": -2}, "The 'budget' option must be a number >= 0. Got -2 instead."),
        ({"score_path": "a..b"}, "The 'score_path' option must be a dotted path"),
        ({"headers": {"Authorization": 12345}}, "The header 'Authorization' must have a string value"),
    ],
)
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(ParameterError) as err:
        HttpTarget(**{"url": "http://127.0.0.1:9/predict", **options})
    assert message in str(err.value)
    assert "12345" not in str(err.value)


def test_serve_target_rejects_bad_fault_options(capsys, unused_port):
    assert main(["serve-target", "dlib-hog", "--fail-rate", "0.8", "--malformed-rate", "0.5"]) == 2
    assert "must sum to at most 1. Got 1.3 instead." in capsys.readouterr().err
    assert main(["serve-target", "no-such-target", "--port", str(unused_port)]) == 2
    assert "Unknown target 'no-such-target'" in capsys.readouterr().err


def test_serve_target_refuses_a_body_past_its_limit_with_413():
    """The server reads a body only up to its limit, whether declared (Content-Length) or sent
    chunked, in every encoding, and answers 413; it used to read any body whole. A PNG that
    declares more pixels than Pillow decodes is a 400, not a server error."""
    from PIL import Image
    from starlette.testclient import TestClient

    client = TestClient(create_app(CallableTarget(lambda images: [True] * len(images)), max_body=2000))
    small = io.BytesIO()
    Image.new("RGB", (8, 8)).save(small, format="PNG")
    png = small.getvalue()
    assert client.post("/predict", content=png, headers={"Content-Type": "image/png"}).status_code == 200
    assert client.post("/predict", files={"image": ("i.png", png, "image/png")}).json()["label"] is True
    big = bytes(5000)
    for request in (
        {"content": big, "headers": {"Content-Type": "image/png"}},
        {"content": iter([big[:1500], big[1500:]]), "headers": {"Content-Type": "image/png"}},  # chunked: no length declared
        {"json": {"image": base64.b64encode(big).decode()}},
        {"files": {"image": ("i.png", big, "image/png")}},
    ):
        reply = client.post("/predict", **request)
        assert reply.status_code == 413 and reply.json() == {"error": "The body is longer than 2000 bytes, the most this server reads."}

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)) + chunk(b"IEND", b"")
    reply = client.post("/predict", content=bomb, headers={"Content-Type": "image/png"})
    assert reply.status_code == 400 and "not a readable image" in reply.json()["error"]


def test_a_campaign_refuses_a_secret_in_its_url_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["hunt", "--generator", "planted", "--target", "http", "--option", "url=http://alice:pw-s3cr3t@127.0.0.1:9/predict",
                 "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "credentials before the host (http://***@127.0.0.1:9/predict)" in err and "env:NAME" in err
    assert "pw-s3cr3t" not in err and "alice" not in err and not out.exists()


def test_a_campaign_stores_and_reports_an_env_query_secret_as_its_reference(canned, tmp_path, monkeypatch, capsys):
    """`?api_key=env:NAME`: the API gets the key, while the store and the report hold only the reference."""
    monkeypatch.setenv("SEARCHER_TEST_KEY", "pw-s3cr3t")
    canned.reply = (200, '{"label": true, "score": 1.0, "boxes": []}')
    out = tmp_path / "c"
    assert main(["hunt", "--generator", "planted", "--target", "http", "--option", f"url={canned.url}?api_key=env:SEARCHER_TEST_KEY",
                 "--strategy", "random", "--budget", "4", "--batch", "4", "--out", str(out), "--no-progress"]) == 0
    assert canned.paths and all(path.endswith("/predict?api_key=pw-s3cr3t") for path in canned.paths)
    assert main(["report", str(out), "--out", str(tmp_path / "report.html")]) == 0
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in written if b"pw-s3cr3t" in p.read_bytes()]
    assert b"api_key=env:SEARCHER_TEST_KEY" in (out / "campaign.sqlite").read_bytes() + (tmp_path / "report.html").read_bytes()
    assert "pw-s3cr3t" not in "".join(capsys.readouterr())
