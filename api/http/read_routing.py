"""Reads on a hot standby with read-your-writes, by write-ahead-log position (pure ASGI).

With a standby configured (`database_read_url`):

- a write's successful response (2xx, or the console's redirect) carries
  `Factledger-Position`: the primary's write position once the request's own writes have
  committed;
- the console's writes also set it as a cookie of the console's path (a browser follows a
  write with a redirect to a page, and sends no header of ours);
- a read (GET and HEAD, and the recall and context POSTs, which only read) may be served from
  the standby: without the header whenever the standby answers, with it only once the standby
  has replayed up to that position (waiting `postgres.read_your_writes_wait_s` at most), and
  from the primary otherwise. A caller that sends back the last position it got therefore
  never reads a standby older than its own writes.

Which stores read the standby is theirs to say (`adapters.read_routing`): the views and
pgvector's searches do; the ledger, the sync queue and everything a write touches stay on the
primary, and a read request that writes (a view catch-up) reads the primary from then on.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger.adapters.read_routing import reading_from_standby, valid_position
from factledger.api.http.deps import ApiState
from factledger.api.http.errors import error_body

if TYPE_CHECKING:  # the driver is imported only where a standby is configured
    from factledger.adapters.postgres.replay_position import ReplayPositions

POSITION_HEADER = "factledger-position"
_POSITION_HEADER_BYTES = POSITION_HEADER.encode()
_READ_METHODS = frozenset({"GET", "HEAD"})
# POSTs that only read: their bodies are queries, not commands.
_READ_POSTS = ("/recall", "/context")
# The service's own health and metrics: they read what the primary says, and are not counted.
_UNROUTED = ("/metrics", "/healthz", "/readyz", "/livez")
# A reviewer's browser follows a write with a redirect to a page: the position rides along in
# a short-lived cookie of the console's path, so the page is never older than the write.
POSITION_COOKIE = "factledger_position"
CONSOLE_PATH = "/console"
_COOKIE_MAX_AGE_S = 60
BAD_POSITION = "Factledger-Position: not a position this service returned"


def is_read(scope: Scope) -> bool:
    method = scope.get("method", "GET")
    return method in _READ_METHODS or (
        method == "POST" and str(scope.get("path", "")).endswith(_READ_POSTS)
    )


def _position(scope: Scope) -> str | None:
    """The caller's position: the header, or (a browser on the console, which sends no
    header of ours) the cookie the console's last write set."""
    cookie: str | None = None
    for key, value in scope.get("headers", ()):
        if key == _POSITION_HEADER_BYTES:
            return str(value.decode("latin-1")).strip()
        if key == b"cookie":
            cookie = str(value.decode("latin-1"))
    if cookie is None or not _on_console(scope):
        return None
    for part in cookie.split(";"):
        name, _, given = part.strip().partition("=")
        if name == POSITION_COOKIE and valid_position(given):
            return given
    return None


def _on_console(scope: Scope) -> bool:
    return str(scope.get("path", "")).startswith(CONSOLE_PATH)


class ReadRoutingMiddleware:
    """Routes reads to the standby (or not) and stamps writes with their position; a no-op
    without a standby."""

    def __init__(self, app: ASGIApp, *, state: ApiState, wait_s: float) -> None:
        self.app = app
        self.state = state
        self.wait_s = wait_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ports = self.state.ports
        replay = None if ports is None else ports.replay
        if (
            scope["type"] != "http"
            or replay is None
            or str(scope.get("path", "")).startswith(_UNROUTED)
        ):
            await self.app(scope, receive, send)
            return
        if is_read(scope):
            await self._read(replay, scope, receive, send)
        else:
            await self._write(replay, scope, receive, send)

    async def _read(
        self, replay: ReplayPositions, scope: Scope, receive: Receive, send: Send
    ) -> None:
        position = _position(scope)
        if position is not None and not valid_position(position):
            body = json.dumps(error_body("InvalidParameterError", BAD_POSITION, POSITION_HEADER))
            payload = body.encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 422,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(payload)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            return
        allowed = await replay.standby_reached(position, wait_s=self.wait_s)
        self.state.metrics.count_read_route(standby=allowed)
        with reading_from_standby(allowed):
            await self.app(scope, receive, send)

    async def _write(
        self, replay: ReplayPositions, scope: Scope, receive: Receive, send: Send
    ) -> None:
        async def stamped(message: Message) -> None:
            # 2xx, or the 303 by which the console answers a form it accepted.
            if message["type"] == "http.response.start" and 200 <= message["status"] < 400:
                # Sent once the handler returned: its writes have committed by now.
                position = await replay.primary_position()
                if position is not None:
                    headers = list(message.get("headers", ()))
                    headers.append((_POSITION_HEADER_BYTES, position.encode()))
                    if _on_console(scope):
                        cookie = (
                            f"{POSITION_COOKIE}={position}; Path={CONSOLE_PATH}; "
                            f"Max-Age={_COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax"
                        )
                        headers.append((b"set-cookie", cookie.encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, stamped)
