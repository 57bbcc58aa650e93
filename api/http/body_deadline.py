"""A time allowance for every request body, so a sender that trickles cannot hold a request
(and the write slot, thread or connection it took) open for as long as it likes.

A body may spend `timeout_s`, plus one more second for every `min_bytes_per_s` bytes it has
delivered, waiting on the client; past that the request is a 408 `RequestTimeout` and the
connection is closed. Only time spent waiting for the client counts: an import that pauses
reading while it records what it read is never charged for its own work, and a large body
arriving at a fair pace is never cut. Once the body is complete, `receive` is passed through
untouched (a stream listens on it for the client leaving).
"""

from __future__ import annotations

import asyncio
import time

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger.api.http.errors import BodyTimeoutError

log = structlog.get_logger(__name__)


class BodyDeadlineMiddleware:
    """Raises `BodyTimeoutError` (408) from `receive` when the body is late."""

    def __init__(self, app: ASGIApp, *, timeout_s: float, min_bytes_per_s: int) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.min_bytes_per_s = min_bytes_per_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.app(scope, _TimedBody(receive, self.timeout_s, self.min_bytes_per_s), send)


class _TimedBody:
    """`receive` with the body's allowance kept across calls."""

    def __init__(self, receive: Receive, timeout_s: float, min_bytes_per_s: int) -> None:
        self._receive = receive
        self._timeout_s, self._rate = timeout_s, min_bytes_per_s
        self._waited = 0.0
        self._received = 0
        self._complete = False

    async def __call__(self) -> Message:
        if self._complete:
            return await self._receive()
        allowance = self._timeout_s + self._received / self._rate - self._waited
        began = time.monotonic()
        try:
            message = await asyncio.wait_for(self._receive(), timeout=max(allowance, 0.0))
        except TimeoutError:
            log.info(
                "http.body_timed_out",
                received_bytes=self._received,
                waited_ms=round((self._waited + time.monotonic() - began) * 1e3),
            )
            raise BodyTimeoutError(
                f"the request body did not arrive in time (allowed: {self._timeout_s:g} s "
                f"plus 1 s per {self._rate} bytes received)"
            ) from None
        self._waited += time.monotonic() - began
        if message["type"] == "http.request":
            self._received += len(message.get("body", b""))
            self._complete = not message.get("more_body", False)
        else:
            self._complete = True  # the client left: nothing more will come
        return message
