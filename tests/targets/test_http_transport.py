"""The `http` target in-process, through `httpx.MockTransport`: no server, no sockets.

The handlers speak the contract of `searcher serve-target` (`searcher.serve`): request
`{"image": "<base64 PNG>"}`, answer 200 `{"label": ..., "score": ..., "boxes": [[x0, y0, x1, y1], ...]}`,
400/422 `{"error": ...}` when there is no answer. tests/test_http_target.py runs the same target
against the real server over loopback.
"""

from __future__ import annotations

import base64
import gzip
import inspect
import io
import json
import socket
import threading

import httpx
import numpy as np
import pytest
from PIL import Image

import targets
from searcher.errors import ParameterError, TargetError
from targets.base import SpendingTarget
from targets.http import BUDGET_EXHAUSTED, HttpTarget

try:
    from searcher.testing import check_target
except ImportError:  # the package is being reorganised
    from searcher.testing.conformance import check_target

URL = "http://api.test/predict"  # never resolved: every request goes through the transport
FAST = {"retries": 2, "backoff": 0.001}  # three attempts, about a millisecond of backoff


@pytest.fixture(autouse=True)
def no_sockets(monkeypatch):
    """Any attempt to reach the network fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("a test in this module opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    """Six distinct small RGB images."""
    return np.random.default_rng(0).integers(0, 256, (6, 24, 32, 3), dtype=np.uint8)


class Api:
    """A MockTransport handler that answers from `replies` (status, body) in turn, the last one for
    good; a reply may be an exception to raise. Records every request it sees."""

    def __init__(self, *replies) -> None:
        self.replies = list(replies) or [(200, {"label": True, "score": 1.0, "boxes": []})]
        self.requests: list[httpx.Request] = []
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
            reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        status, body = reply
        if isinstance(body, str):
            return httpx.Response(status, text=body, headers={"Content-Type": "application/json"})
        return httpx.Response(status, json=body)

    @property
    def calls(self) -> int:
        return len(self.requests)

    def target(self, **options) -> HttpTarget:
        return HttpTarget(**{"url": URL, **options}, transport=httpx.MockTransport(self))


def _decode_png(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG"
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


# ------------------------------------------------------------------ the contract


def test_a_200_answer_becomes_the_predictions(images):
    """A 200 `{"label", "score", "boxes"}` answer becomes that label, score and boxes, with no error."""
    api = Api((200, {"label": True, "score": 2.5, "boxes": [[1, 2, 30, 40], [5.5, 6, 7, 8]]}))
    pred = api.target().predict(images[:2])
    assert pred.label == [True, True] and pred.score == [2.5, 2.5] and pred.error == [None, None]
    assert pred.boxes == [[(1.0, 2.0, 30.0, 40.0), (5.5, 6.0, 7.0, 8.0)]] * 2
    assert api.calls == 2


def test_the_request_body_is_the_default_contract_and_decodes_to_the_pixels_sent(images):
    """Each request is a POST of `{"image": "<base64 PNG>"}` whose PNG decodes to exactly the image sent."""
    api = Api()
    target = api.target(max_in_flight=1)
    target.predict(images[:3])
    target.close()  # a closed target builds its next client on the same transport
    target.predict(images[3:4])
    assert api.calls == 4
    for request, image in zip(api.requests, images):
        assert request.method == "POST" and str(request.url) == URL
        assert request.headers["content-type"] == "application/json"
        body = json.loads(request.content)
        assert list(body) == ["image"]
        assert np.array_equal(_decode_png(base64.b64decode(body["image"], validate=True)), image)


def test_raw_bodies_are_the_png_itself(images):
    """send="raw" posts the PNG bytes as image/png, and they decode to exactly the image sent."""
    api = Api()
    api.target(send="raw").predict(images[:1])
    (request,) = api.requests
    assert request.headers["content-type"] == "image/png"
    assert np.array_equal(_decode_png(request.content), images[0])


def test_transport_is_a_checked_keyword_only_option():
    """`transport` is keyword-only, and anything but an httpx.BaseTransport (a string from --option, say) is a ParameterError."""
    assert inspect.signature(HttpTarget).parameters["transport"].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(ParameterError, match=r"The 'transport' option must be an httpx.BaseTransport .* Got 'mock' instead\."):
        targets.load("http", url=URL, transport="mock")


# ------------------------------------------------------------------ retries and errors


def test_a_503_then_a_200_is_retried_and_answered(images):
    """A 503 is retried, and the 200 that follows is the answer."""
    api = Api((503, {"error": "injected failure"}), (200, {"label": False, "score": None, "boxes": []}))
    pred = api.target(**FAST).predict(images[:1])
    assert (pred.label, pred.score, pred.boxes, pred.error) == ([False], [None], [[]], [None])
    assert api.calls == 2


def test_a_persistent_503_is_an_error_never_a_label(images):
    """A 503 on every attempt gives up after retries + 1 requests with an error and label None."""
    api = Api((503, {"error": "injected failure"}))
    pred = api.target(**FAST).predict(images[:1])
    assert pred.error == ["HTTP 503 after 3 attempts"]
    assert (pred.label, pred.score, pred.boxes) == ([None], [None], [[]])
    assert api.calls == 3


def test_a_timeout_is_retried_then_an_error_never_a_label(images):
    """A ReadTimeout on every attempt is retried, then gives an error and label None."""
    api = Api(httpx.ReadTimeout("read timed out"))
    pred = api.target(**FAST).predict(images[:1])
    assert pred.error == ["timed out after 3 attempts"] and pred.label == [None]
    assert api.calls == 3


def test_a_timeout_then_an_answer_is_answered(images):
    """A ReadTimeout followed by a 200 is retried and answered."""
    api = Api(httpx.ReadTimeout("read timed out"), (200, {"label": True, "score": 0.5, "boxes": []}))
    pred = api.target(**FAST).predict(images[:1])
    assert (pred.label, pred.error) == ([True], [None]) and api.calls == 2


def test_a_malformed_json_body_is_an_error_never_a_label(images):
    """A 200 with a truncated JSON body (the server's `malformed` fault) is an error, not retried."""
    text = json.dumps({"label": True, "score": 1.0, "boxes": []})
    api = Api((200, text[: len(text) // 2]))
    pred = api.target(**FAST).predict(images[:1])
    assert pred.error == ["malformed JSON response"] and pred.label == [None] and pred.score == [None]
    assert api.calls == 1


def test_a_redirect_is_an_error_that_names_where_not_malformed_json(images):
    """A 302 (an API moved, a login page) is not followed, since a redirected POST becomes a GET; its error says where it points."""
    calls = []

    def handler(request):
        calls.append(request)
        return httpx.Response(302, headers={"Location": "https://api.example.org/v2/predict"}, text="<html>moved</html>")

    pred = HttpTarget(url=URL, transport=httpx.MockTransport(handler), **FAST).predict(images[:1])
    assert pred.error == ["HTTP 302 redirect to 'https://api.example.org/v2/predict': give that URL"] and pred.label == [None]
    assert len(calls) == 1


def test_429_is_retried(images):
    """A 429 is retried like a 5xx: a 429 then a 200 is answered, a persistent 429 is an error."""
    api = Api((429, {"error": "slow down"}), (200, {"label": True, "score": 1.0, "boxes": []}))
    assert api.target(**FAST).predict(images[:1]).label == [True] and api.calls == 2
    api = Api((429, {"error": "slow down"}))
    pred = api.target(**FAST).predict(images[:1])
    assert pred.error == ["HTTP 429 after 3 attempts"] and pred.label == [None] and api.calls == 3


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_are_not_retried(images, status):
    """A 4xx other than 429 is final: one request, error "HTTP <status>", label None."""
    api = Api((status, {"error": "no"}), (200, {"label": True, "score": 1.0, "boxes": []}))
    pred = api.target(**FAST).predict(images[:1])
    assert pred.error == [f"HTTP {status}"] and pred.label == [None]
    assert api.calls == 1


# ------------------------------------------------------------------ cache and budget


def test_the_same_image_twice_costs_one_request(images, tmp_path):
    """An image already answered is not requested again: in one batch, in a later batch, or from the disk cache."""
    api = Api()
    target = api.target(cache_dir=tmp_path)
    first = target.predict(np.stack([images[0], images[0]]))
    again = target.predict(images[:1])
    assert api.calls == 1 and target.requests_sent == 1
    assert first.label == [True, True] and again.label == [True] and again.error == [None]

    down = Api((503, {"error": "down"}))
    fresh = down.target(cache_dir=tmp_path, **FAST)
    assert fresh.predict(images[:1]).label == [True] and down.calls == 0


def test_past_the_budget_no_request_is_sent(images):
    """Once the budget is spent no request goes out and each further image gets BUDGET_EXHAUSTED."""
    api = Api()
    target = api.target(cost_per_call=1, budget=2)
    pred = target.predict(images[:4])
    assert api.calls == 2 and target.spent == 2.0 and target.exhausted
    assert sorted(pred.error, key=str) == [None, None, BUDGET_EXHAUSTED, BUDGET_EXHAUSTED]
    assert all(label is None for label, err in zip(pred.label, pred.error) if err == BUDGET_EXHAUSTED)
    later = target.predict(images[4:6])
    assert later.error == [BUDGET_EXHAUSTED] * 2 and later.label == [None, None]
    assert api.calls == 2


def test_spending_is_a_record_another_target_takes_up(images):
    """`spending()` / `restore_spending()`: a new target (a resumed campaign's) continues the count,
    so the budget holds across processes; every attempt sent counts, a failed one included."""
    api = Api((503, {"error": "down"}), (200, {"label": True, "score": 1.0, "boxes": []}))
    first = api.target(cost_per_call=1, budget=3, **FAST)
    assert isinstance(first, SpendingTarget) and first.cap_options == ("budget",) and first.cap_reached() is None
    first.predict(images[:1])  # a 503, then an answer: both billed
    assert first.spending() == {"requests": 2, "spent": 2.0, "budget": 3.0, "cost_per_call": 1.0}

    resumed = api.target(cost_per_call=1, budget=3, **FAST)
    resumed.restore_spending(first.spending())
    pred = resumed.predict(images[1:3])
    assert api.calls == 3 and sorted(pred.error, key=str) == [None, BUDGET_EXHAUSTED]
    assert resumed.cap_reached() == "spending cap reached (3 of 3), 3 requests sent at 1 each"

    raised = api.target(cost_per_call=1, budget=5, **FAST)
    raised.restore_spending(resumed.spending())  # the count is the record's, the cap this target's own
    assert raised.cap_reached() is None and raised.predict(images[3:5]).error == [None, None] and api.calls == 5
    assert api.target().cap_reached() is None, "no budget, no cap"


@pytest.mark.parametrize("state", [None, {}, {"requests": -1, "spent": 0}, {"requests": 1, "spent": "x"}, {"requests": True, "spent": 1}])
def test_a_spending_record_that_does_not_parse_is_refused(state):
    with pytest.raises(ParameterError, match="stored spending of the http target must hold"):
        Api().target(budget=3).restore_spending(state)

# ------------------------------------------------------------------ secrets


def test_env_headers_are_resolved_at_request_time_and_never_shown(images, monkeypatch):
    """An `env:NAME` header is read at each predict, sent resolved, and never appears in an error or repr."""
    first, second = "s3cr3t-first-value", "s3cr3t-second-value"
    monkeypatch.delenv("SEARCHER_TEST_TOKEN", raising=False)
    api = Api(
        (200, {"label": True, "score": 1.0, "boxes": []}),
        (200, {"label": True, "score": 1.0, "boxes": []}),
        httpx.ReadTimeout(f"timed out sending Authorization: {second}"),  # exception texts may quote headers
        (401, {"error": f"bad token {second}"}),
    )
    target = api.target(headers={"Authorization": "env:SEARCHER_TEST_TOKEN"}, retries=1, backoff=0)
    with pytest.raises(TargetError, match="'SEARCHER_TEST_TOKEN', which is not set") as missing:
        target.predict(images[:1])
    assert api.calls == 0

    monkeypatch.setenv("SEARCHER_TEST_TOKEN", first)
    target.predict(images[:1])
    monkeypatch.setenv("SEARCHER_TEST_TOKEN", second)
    target.predict(images[1:2])
    assert [r.headers["authorization"] for r in api.requests] == [first, second]

    failed = target.predict(images[2:3])  # a timeout, then a 401 that echoes the token
    assert failed.error == ["HTTP 401"] and failed.label == [None]
    assert [r.headers["authorization"] for r in api.requests[2:]] == [second, second]
    shown = repr(target) + str(missing.value) + repr(failed) + repr(vars(target))
    assert first not in shown and second not in shown
    assert "env:SEARCHER_TEST_TOKEN" in repr(target)



def test_a_scheme_before_an_env_reference_is_kept_and_the_value_read(images, monkeypatch):
    """`"Bearer env:NAME"` sends `Bearer <value>`; it used to send the text `env:NAME` itself."""
    monkeypatch.setenv("SEARCHER_TEST_TOKEN", "t0k3n")
    api = Api((200, {"label": True, "score": 1.0, "boxes": []}))
    target = api.target(headers={"Authorization": "Bearer env:SEARCHER_TEST_TOKEN", "X-Key": "Bearer literal"})
    target.predict(images[:1])
    assert api.requests[0].headers["authorization"] == "Bearer t0k3n" and api.requests[0].headers["x-key"] == "Bearer literal"
    assert target.headers_shown == {"Authorization": "Bearer env:SEARCHER_TEST_TOKEN", "X-Key": "***"}


# ------------------------------------------------------------------ a real model behind the transport


class ServedTarget:
    """A MockTransport handler that does what `searcher serve-target` does at POST /predict."""

    def __init__(self, target) -> None:
        self.target, self.calls = target, 0
        self._lock = threading.Lock()  # targets need not be thread-safe; the server runs one image at a time

    def __call__(self, request: httpx.Request) -> httpx.Response:
        try:
            data = base64.b64decode(json.loads(request.content)["image"], validate=True)
        except (ValueError, KeyError, TypeError):
            return httpx.Response(400, json={"error": 'A JSON body must be {"image": "<base64 PNG>"}.'})
        try:
            image = _decode_png(data)
        except (OSError, ValueError):
            return httpx.Response(400, json={"error": f"The body is not a readable image ({len(data)} bytes)."})
        with self._lock:
            self.calls += 1
            pred = self.target.predict(image[None])
        if pred.error[0] is not None:
            return httpx.Response(422, json={"error": pred.error[0]})
        body = {"label": _plain(pred.label[0]), "score": _plain(pred.score[0]), "boxes": [[_plain(v) for v in b] for b in pred.boxes[0]]}
        return httpx.Response(200, json=body)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


@pytest.fixture(scope="module")
def served():
    return ServedTarget(targets.load("dlib-hog"))


@pytest.fixture(scope="module")
def faces() -> np.ndarray:
    import generators

    gen = generators.load("faces", resolution=128)
    return gen.generate(gen.space.sample(6, seed=0)).images


def test_predictions_through_the_transport_equal_the_local_target(served, faces):
    """dlib-hog behind the transport answers exactly what dlib-hog answers locally."""
    local = served.target.predict(faces)
    pred = HttpTarget(url=URL, transport=httpx.MockTransport(served)).predict(faces)
    assert pred.error == [None] * len(faces)
    assert pred.label == local.label and pred.score == local.score and pred.boxes == local.boxes
    assert any(local.label) and not all(local.label), "the renders should hold both hits and misses"


def test_the_registered_http_target_with_a_transport_passes_the_conformance_checks(served):
    """`targets.load("http", url=..., transport=...)` backed by dlib-hog passes check_target."""
    target = targets.load("http", url=URL, transport=httpx.MockTransport(served))
    before = served.calls
    check_target(target)
    assert target.requests_sent == served.calls - before > 0


# ------------------------------------------------------------------ answer size


def _streamed(chunks, headers=None):
    """A handler answering 200 with the body `chunks`, streamed (no Content-Length unless `headers` give one)."""

    class Body(httpx.SyncByteStream):
        def __iter__(self):
            yield from chunks

    return lambda request: httpx.Response(200, headers={"Content-Type": "application/json", **(headers or {})}, stream=Body())


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(_streamed([b" " * 600, json.dumps({"label": True, "score": 1.0, "boxes": []}).encode()]), id="streamed"),
        pytest.param(lambda request: httpx.Response(200, json={"label": True, "score": 1.0, "boxes": [[0, 0, 1, 1]] * 100}), id="declared"),
        pytest.param(_streamed([gzip.compress(b" " * 10_000 + b"{}")], {"Content-Encoding": "gzip"}), id="gzip"),
    ],
)
def test_an_answer_past_max_response_bytes_is_an_error_not_retried(images, reply):
    """An answer longer than `max_response_bytes` (sent in chunks, declared by Content-Length, or
    decompressed from gzip) is an error for the image, never a label, and is not asked again."""
    calls = []
    target = HttpTarget(url=URL, transport=httpx.MockTransport(lambda r: calls.append(r) or reply(r)), max_response_bytes=512, **FAST)
    pred = target.predict(images[:1])
    assert pred.error == ["response larger than 512 bytes (max_response_bytes)"] and pred.label == [None]
    assert len(calls) == 1
    assert HttpTarget(url=URL, transport=httpx.MockTransport(reply), max_response_bytes=2**20).predict(images[:1]).error != pred.error


def test_max_response_bytes_is_checked():
    with pytest.raises(ParameterError, match=r"The 'max_response_bytes' option must be an integer >= 1. Got 0 instead."):
        HttpTarget(url=URL, max_response_bytes=0)


# ------------------------------------------------------------------ secrets in the URL


@pytest.mark.parametrize(
    "url, shown, where",
    [
        ("https://alice:pw-s3cr3t@api.test/predict", "https://***@api.test/predict", "credentials before the host"),
        ("https://pw-s3cr3t@api.test/predict", "https://***@api.test/predict", "credentials before the host"),
        ("https://api.test/predict?model=v2&api_key=pw-s3cr3t", "https://api.test/predict?model=v2&api_key=***", "query parameter 'api_key'"),
        ("https://api.test/predict?Access-Token=pw-s3cr3t", "https://api.test/predict?Access-Token=***", "query parameter 'Access-Token'"),
        ("https://api.test/predict?SIG=pw-s3cr3t&key=env:K", "https://api.test/predict?SIG=***&key=env:K", "query parameter 'SIG'"),
        ("https://api.test/predict?token=", "https://api.test/predict?token=***", "query parameter 'token'"),
    ],
)
def test_a_secret_in_the_url_is_refused_without_showing_it(url, shown, where):
    """A literal secret in the URL (which a campaign stores, and its report shows) is refused like a
    literal header: the message masks it and names the `env:` way that works."""
    with pytest.raises(ParameterError) as err:
        targets.load("http", url=url)
    message = str(err.value)
    assert where in message and shown in message and "env:NAME" in message and "\n" not in message
    assert "pw-s3cr3t" not in message and "alice" not in message


def test_a_bad_url_is_refused_without_showing_a_secret_in_it():
    with pytest.raises(ParameterError, match=r"must be an http:// or https:// address\. Got 'ftp://\*\*\*@api.test/x' instead"):
        HttpTarget(url="ftp://bob:pw-s3cr3t@api.test/x")
    with pytest.raises(ParameterError, match="must be an http:// or https:// address"):
        HttpTarget(url="http://[::1/predict")


def test_an_env_query_value_is_read_at_request_time_and_never_shown(images, monkeypatch):
    """`?api_key=env:NAME` sends the variable's value, read at each predict and URL-encoded; the
    target keeps, shows and keys its cache by the template only."""
    monkeypatch.delenv("SEARCHER_TEST_KEY", raising=False)
    api = Api()
    target = api.target(url="http://api.test/predict?model=v 2&api_key=env:SEARCHER_TEST_KEY")
    with pytest.raises(TargetError, match="query parameter 'api_key' reads the environment variable 'SEARCHER_TEST_KEY', which is not set"):
        target.predict(images[:1])
    assert api.calls == 0
    monkeypatch.setenv("SEARCHER_TEST_KEY", "k&y=s3cr3t")
    target.predict(images[:1])
    assert api.requests[0].url.params["api_key"] == "k&y=s3cr3t" and api.requests[0].url.params["model"] == "v 2"
    assert "s3cr3t" not in repr(target) + repr(vars(target)) and "api_key=env:SEARCHER_TEST_KEY" in repr(target)
