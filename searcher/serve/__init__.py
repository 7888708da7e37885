"""Serve any local target over HTTP, in the contract the `http` target expects by default.

    POST /predict   body {"image": "<base64 PNG>"}, or the PNG itself, or multipart file field "image"
                    200  {"label": ..., "score": ..., "boxes": [[x0, y0, x1, y1], ...]}
                    400  {"error": ...} the body holds no readable image
                    413  {"error": ...} the body is longer than `max_body` bytes (default 32 MiB)
                    422  {"error": ...} the target gave no answer for this image
    GET  /health    200  {"status": "ok", "target": NAME, "task": ..., "requests": n, "faults": {...}}

So `HttpTarget(url="http://127.0.0.1:PORT/predict")` talks to it with no other option. Faults
are injected on purpose (seeded) to test clients: answers 503, answers late, answers a truncated
body; `sleep` delays every request without blocking the others (an I/O-bound API, for benchmarks).
The model runs in a worker thread, one image at a time, since targets need not be thread-safe.

    searcher serve-target dlib-hog --port 8000 --fail-rate 0.2 --fault-seed 0
    searcher serve-target dlib-hog --host 0.0.0.0 --token env:SERVE_TOKEN   # any host but loopback needs a token
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import io
import ipaddress
import json
import os
import random
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import uvicorn
from PIL import Image
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from searcher.errors import ParameterError
from searcher.validation import ENV_REFERENCE, check_int, check_number
from targets.base import Target

__all__ = ["BodyTooLarge", "Faults", "create_app", "is_loopback", "read_body", "resolve_token", "serve"]

FAULTS = ("fail", "slow", "malformed")
MAX_BODY = 32 * 2**20  # bytes of one request body; a PNG of a render is well under 1 MiB


@dataclass(frozen=True)
class Faults:
    """What the server does wrong on purpose. Each request draws one fault at most, from `seed`.

    Attributes:
        fail_rate: fraction of requests answered 503.
        slow_rate: fraction answered only after `slow_seconds` more.
        malformed_rate: fraction answered 200 with a truncated JSON body.
        sleep: seconds every request waits before it is answered.
    """

    fail_rate: float = 0.0
    slow_rate: float = 0.0
    slow_seconds: float = 0.0
    malformed_rate: float = 0.0
    sleep: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("fail_rate", "slow_rate", "malformed_rate"):
            check_number(name, getattr(self, name), 0.0, 1.0)
        for name in ("slow_seconds", "sleep"):
            check_number(name, getattr(self, name), 0.0)
        check_int("seed", self.seed, 0)
        total = self.fail_rate + self.slow_rate + self.malformed_rate
        if total > 1.0:
            raise ParameterError(f"The fail, slow and malformed rates must sum to at most 1. Got {total:g} instead.")

    def draw(self, rng: random.Random) -> str | None:
        """The fault for one request, or None."""
        u = rng.random()
        for name, rate in zip(FAULTS, (self.fail_rate, self.slow_rate, self.malformed_rate)):
            if u < rate:
                return name
            u -= rate
        return None


class _TargetApp:
    """The request handlers, with the target, the fault RNG and the counts /health reports."""

    def __init__(self, target: Target, name: str, faults: Faults, token: str | None = None, max_body: int = MAX_BODY) -> None:
        self.target, self.name, self.faults, self.token, self.max_body = target, name, faults, token, max_body
        self.rng = random.Random(faults.seed)
        self.counts = {"requests": 0, **{f: 0 for f in FAULTS}}
        self.model_lock = threading.Lock()

    async def health(self, request: Request) -> JSONResponse:
        faults = {f: self.counts[f] for f in FAULTS}
        return JSONResponse({"status": "ok", "target": self.name, "task": self.target.task, "requests": self.counts["requests"], "faults": faults})

    async def predict(self, request: Request) -> Response:
        if self.token is not None and not hmac.compare_digest(request.headers.get("authorization", ""), f"Bearer {self.token}"):
            return JSONResponse({"error": "missing or wrong bearer token (send Authorization: Bearer <token>)"}, status_code=401)
        self.counts["requests"] += 1
        fault = self.faults.draw(self.rng)
        if fault:
            self.counts[fault] += 1
        if self.faults.sleep:
            await asyncio.sleep(self.faults.sleep)
        if fault == "fail":
            return JSONResponse({"error": "injected failure"}, status_code=503)
        if fault == "slow":
            await asyncio.sleep(self.faults.slow_seconds)
        try:
            image = _decode(await _image_bytes(request, self.max_body))
        except BodyTooLarge as exc:
            return JSONResponse({"error": str(exc)}, status_code=413)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        pred = await run_in_threadpool(self._predict_one, image)
        if pred.error[0] is not None:
            return JSONResponse({"error": pred.error[0]}, status_code=422)
        body = {"label": _plain(pred.label[0]), "score": _plain(pred.score[0]), "boxes": [[_plain(v) for v in b] for b in pred.boxes[0]]}
        if fault == "malformed":
            text = json.dumps(body)
            return Response(text[: len(text) // 2], media_type="application/json")
        return JSONResponse(body)

    def _predict_one(self, image: np.ndarray):
        with self.model_lock:
            return self.target.predict(image[None])


def create_app(target: Target, name: str = "target", faults: Faults | None = None, token: str | None = None,
               max_body: int = MAX_BODY) -> Starlette:
    """An ASGI app serving `target` at POST /predict and GET /health; with `token`, /predict
    answers only requests carrying `Authorization: Bearer <token>` (401 otherwise). A body longer
    than `max_body` bytes is answered 413 as soon as it is known to be, never read whole."""
    check_int("max_body", max_body, 1)
    handlers = _TargetApp(target, name, faults or Faults(), token, max_body)
    return Starlette(routes=[Route("/predict", handlers.predict, methods=["POST"]), Route("/health", handlers.health, methods=["GET"])])


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_token(token: str | None, host: str) -> str | None:
    """The bearer token a server on `host` requires: read from the environment (`token` is
    `env:NAME`), and required on any host but loopback, which would serve every machine that can
    reach this one.

    Raises:
        ParameterError: a literal token (it would show in the process list and the shell history),
            an unset variable, or a non-loopback host without a token.
    """
    if token is None:
        if not is_loopback(host):
            raise ParameterError(f"--host {host} serves every machine that can reach this one. Require a token with "
                                 "--token env:NAME (clients send Authorization: Bearer <its value>; the http target: "
                                 "headers={'Authorization': 'Bearer env:NAME'}), or bind 127.0.0.1.")
        return None
    match = ENV_REFERENCE.match(token)
    if match is None or match.group(1) is not None:
        raise ParameterError(f"--token must be env:NAME, the environment variable holding the token (a literal token shows in the "
                             f"process list and the shell history). Got {token[:4]!r}... instead.")
    name = match.group(2)
    if not os.environ.get(name):
        raise ParameterError(f"--token reads the environment variable {name!r}, which is not set or empty.")
    return os.environ[name]


def serve(name: str, options: dict[str, Any], host: str = "127.0.0.1", port: int = 8000, faults: Faults | None = None,
          token: str | None = None) -> None:
    """Loads target `name` with `options` and serves it with uvicorn until interrupted; `token`
    (`env:NAME`) is required on any host but loopback (see `resolve_token`)."""
    import targets

    secret = resolve_token(token, host)
    app = create_app(targets.load(name, **options), name, faults, secret)
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2)


class BodyTooLarge(Exception):
    """A request body longer than the server reads."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, read up to `limit` bytes: a longer one (declared or sent) raises
    BodyTooLarge, never read whole (this server's images, the rating page's JSON)."""
    declared = request.headers.get("content-length", "")
    too_large = BodyTooLarge(f"The body is longer than {limit} bytes, the most this server reads.")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def _image_bytes(request: Request, limit: int) -> bytes:
    """The PNG (or other image) bytes of a request, whichever of the three encodings it used; the
    body is read whole only up to `limit` bytes (BodyTooLarge past it)."""
    kind = request.headers.get("content-type", "")
    body = await read_body(request, limit)
    if kind.startswith("multipart/form-data"):

        async def replay() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        form = await Request(request.scope, replay).form()
        try:
            upload = form.get("image")
            if upload is None or isinstance(upload, str):
                raise ValueError("A multipart body must carry the image as the file field 'image'.")
            return await upload.read()
        finally:
            await form.close()
    if kind.startswith("application/json"):
        try:
            return base64.b64decode(json.loads(body)["image"], validate=True)
        except (ValueError, KeyError, TypeError):
            raise ValueError('A JSON body must be {"image": "<base64 PNG>"}.') from None
    return body


def _decode(data: bytes) -> np.ndarray:
    try:
        with Image.open(io.BytesIO(data)) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8)
    except (OSError, ValueError, Image.DecompressionBombError):
        raise ValueError(f"The body is not a readable image ({len(data)} bytes).") from None


def _plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars become Python numbers and booleans."""
    return value.item() if isinstance(value, np.generic) else value
