"""The rating page over HTTP (starlette), and `serve`, which runs it with uvicorn on a loopback port.

    GET  /                 the page, with this annotator's answers so far and where to start
    GET  /image/<i>        image i of the directory's table (PNG); any other path is 404
    POST /rate             {"image": i, "attribute": name, "value": level}  -> 200, or 400 with the reason
    POST /mark             {"image": i, "marked": true|false}              -> 200, or 400 with the reason
                           (507 with the reason when the rating could not be saved, e.g. a full disk)
    GET  /favicon.ico      204 (no icon)

The page is one template with its CSS and script inline, allowed by a per-response nonce in a
Content-Security-Policy that lets it fetch nothing but this server's images and endpoints. Writes
take JSON only (a cross-site form cannot send it without a preflight this server never answers),
and requests must name a loopback host (no DNS rebinding).
"""

from __future__ import annotations

import json
import secrets
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from searcher.annotate.images import read_images
from searcher.annotate.session import Session
from searcher.errors import ParameterError, SearcherError
from searcher.serve import BodyTooLarge, is_loopback, read_body
from searcher.validation import checked

__all__ = ["LOOPBACK_HOSTS", "app", "serve"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")  # as a Host header names them
MAX_BODY = 64 * 2**10  # bytes of a rating's JSON (a few dozen in practice); a longer body is answered 413, never read whole
_TEMPLATES = jinja2.Environment(loader=jinja2.PackageLoader("searcher.annotate", "templates"), autoescape=True)
_CSP = ("default-src 'none'; img-src 'self'; connect-src 'self'; style-src 'nonce-{0}'; script-src 'nonce-{0}'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class _Handlers:
    def __init__(self, session: Session) -> None:
        self.session = session

    async def page(self, request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        try:
            state = await run_in_threadpool(self.session.state)
        except SearcherError as exc:  # ratings the page cannot read: say why, in one line
            return Response(f"searcher annotate: {exc}\n", status_code=500, media_type="text/plain")
        html = _TEMPLATES.get_template("page.html").render(state=state, nonce=nonce, directory=self.session.images.source.dir.name)
        return HTMLResponse(html, headers={"Content-Security-Policy": _CSP.format(nonce), "Cache-Control": "no-store",
                                           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})

    async def image(self, request: Request) -> Response:
        index = request.path_params["index"]
        if index >= len(self.session.images):
            return self._no_image(index)
        png = await run_in_threadpool(self.session.images.png, index)
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=3600", "X-Content-Type-Options": "nosniff"})

    async def rate(self, request: Request) -> Response:
        return await self._write(request, lambda body, i: self.session.rate(i, body.get("attribute"), body.get("value")))

    async def mark(self, request: Request) -> Response:
        return await self._write(request, lambda body, i: self.session.mark(i, body.get("marked")))

    async def _write(self, request: Request, write: Callable[[dict, int], None]) -> Response:
        """Checks the JSON body and its image index, then runs `write` (its ParameterError is a 400,
        any other SearcherError, a rating the log could not save, a 507)."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "Send the body as JSON (Content-Type: application/json)."}, status_code=415)
        try:
            body = json.loads(await read_body(request, MAX_BODY))
        except BodyTooLarge as exc:
            return JSONResponse({"error": str(exc)}, status_code=413)
        except ValueError:
            return JSONResponse({"error": "The body is not valid JSON."}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "The body must be a JSON object."}, status_code=400)
        index = body.get("image")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.session.images):
            return self._no_image(index)
        try:
            await run_in_threadpool(write, body, index)
        except ParameterError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except SearcherError as exc:
            return JSONResponse({"error": str(exc)}, status_code=507)
        return JSONResponse({"ok": True})

    def _no_image(self, index: Any) -> Response:
        return JSONResponse({"error": f"No image {index!r}: this directory has images 0 .. {len(self.session.images) - 1}."}, status_code=404)


async def _no_icon(request: Request) -> Response:
    """No icon, said without a 404 in the browser's console."""
    return Response(status_code=204)


@checked("annotate.app")
def app(directory: str | Path, attributes: Sequence[str] | str, annotator: str, hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The rating page of `annotator` over the images of a campaign or transect run `directory`,
    asking about `attributes` (names with a scale in the generator's vocabulary) one at a time;
    ratings are appended to `directory/annotations.csv`. `hosts`: the Host names requests may carry.

    Raises:
        ParameterError: not a campaign or transect directory, an unknown attribute (named, with
            the valid ones), or an annotator name that is not a plain name.
    """
    handlers = _Handlers(Session(read_images(directory), attributes, annotator))
    return Starlette(routes=[Route("/", handlers.page), Route("/image/{index:int}", handlers.image),
                             Route("/rate", handlers.rate, methods=["POST"]), Route("/mark", handlers.mark, methods=["POST"]),
                             Route("/favicon.ico", _no_icon)],
                     middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))])


@checked("annotate.serve")
def serve(directory: str | Path, attributes: Sequence[str] | str, annotator: str, host: str = "127.0.0.1", port: int = 8765,
          ready: Callable[[str], Any] | None = None) -> None:
    """Serves the rating page (see `app`) on `host:port` until interrupted; `ready(url)` is called
    once the port is bound (port 0: any free one). Only loopback hosts: the page has no login.

    Raises:
        ParameterError: a host that is not loopback, a port in use, or what `app` raises.
    """
    name = host.strip("[]")
    if not is_loopback(name):
        raise ParameterError(f"The rating page has no login, so it listens on this machine only: --host must be a loopback address "
                             f"(127.0.0.1, ::1, localhost). Got {host!r} instead. Annotators elsewhere can reach it through "
                             "an SSH tunnel (ssh -L PORT:127.0.0.1:PORT).")
    in_url = f"[{name}]" if ":" in name else name
    application = app(directory, attributes, annotator, hosts=[*LOOPBACK_HOSTS, in_url])
    sock = socket.socket(socket.AF_INET6 if ":" in name else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((name, port))
    except OSError as exc:
        sock.close()
        raise ParameterError(f"Cannot listen on {host}:{port} ({exc.strerror or exc}); another page may be using it. "
                             "Choose another --port, or --port 0 for any free one.") from None
    sock.listen(128)
    if ready is not None:
        ready(f"http://{in_url}:{sock.getsockname()[1]}/")
    uvicorn.Server(uvicorn.Config(application, log_level="warning", timeout_graceful_shutdown=2)).run(sockets=[sock])
