"""Pure ASGI middleware: request context (id, logging, metrics, last-resort 500) and body limits.

Pure ASGI rather than `BaseHTTPMiddleware` so streaming and exception propagation stay intact
and each request costs one extra coroutine, not a task.
"""

from __future__ import annotations

import json
import re
import time
import uuid

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger.api.http.errors import error_body, render
from factledger.api.http.metrics import UNMATCHED_ROUTE, ApiMetrics
from factledger.api.http.timing import begin_request

log = structlog.get_logger(__name__)

REQUEST_ID_HEADER = "x-request-id"
BODY_UNREADABLE = "the request body could not be read"
# `time.monotonic()` when the request reached this process, in the ASGI scope's state
# (`request.state.arrived_at`): budgets that promise the caller a time count from it.
ARRIVED_AT = "arrived_at"
# A caller's request id is reused only when it is short and plain (it lands in logs).
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class RequestContextMiddleware:
    """Outermost layer: binds a request id, times the request, renders unexpected errors.

    - The request id comes from `X-Request-ID` when well-formed, else a new uuid; it is echoed
      on the response and bound to every log line of the request.
    - Latency is observed per route template; unmatched paths share one label.
    - An exception nothing else handled becomes the generic 500 (logged once, by `render`),
      unless the response had already started, in which case the connection is cut.
    - The request's arrival is stamped first (`ARRIVED_AT`), before auth and every check;
      the response's `Server-Timing: app;dur=<ms>` says how long it then spent in the app,
      and `use;dur=<ms>` how much of that its use case took (`api.http.timing`).
    """

    def __init__(self, app: ASGIApp, *, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})[ARRIVED_AT] = time.monotonic()
        given = _header(scope, REQUEST_ID_HEADER.encode())
        request_id = given if given and _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        structlog.contextvars.bind_contextvars(request_id=request_id)
        status = 500
        started = False
        timing = begin_request()
        begun = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                # Time inside the app, so a caller can tell it from queueing before it, and
                # the use case's share of it (the rest is the request's own overhead).
                headers.append((b"server-timing", timing.header(time.perf_counter() - begun)))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            if started:
                raise
            await render(exc)(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or UNMATCHED_ROUTE
            elapsed = time.perf_counter() - begun
            self.metrics.observe_request(scope["method"], template, status, elapsed)
            log.info(
                "http.request_served",
                method=scope["method"],
                route=template,
                status=status,
                duration_ms=round(elapsed * 1000, 2),
            )
            structlog.contextvars.unbind_contextvars("request_id")


class BodySizeLimitMiddleware:
    """Refuses bodies over `max_bytes` with 413: by `Content-Length` at once, and a body sent
    without one (chunked) is read up to the limit before the app sees any of it.

    Reading first, rather than failing inside the app's own read, matters: FastAPI turns any
    error raised while it reads a body into a 400. Paths in `unlimited` (the streamed import)
    pass untouched: their route reads the body in bounded pieces itself.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, unlimited: tuple[str, ...] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.unlimited = frozenset(unlimited)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in self.unlimited:
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > self.max_bytes:
                await self._refuse(send)
                return
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                # The body never arrived whole (the client left, or the server dropped a
                # malformed chunk and answered 400 itself): a client error, never a 500.
                await _answer(send, 400, error_body("BadRequest", BODY_UNREADABLE))
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        body = error_body("PayloadTooLargeError", f"body exceeds {self.max_bytes} bytes")
        await _answer(send, 413, body)


async def _answer(send: Send, status: int, body: dict[str, str]) -> None:
    """A JSON error that closes the connection (the rest of the body is never read)."""
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
