"""How many long-lived responses (event streams) each principal holds open in this process, so
that one token cannot open them without bound: beyond `limit` a new one is a 429 with
`Retry-After`, and a stream's lease is given back when its response ends, however it ends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.types import Receive, Scope, Send

from factledger.api.http.auth import Principal
from factledger.api.http.errors import RateLimitedError

# A held stream ends at the latest when its token does: a retry sooner than this rarely helps.
RETRY_AFTER_S = 5


class StreamLeases:
    """Counts of open streams by (tenant, principal id); an entry goes when its count is 0."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[tuple[str, str], int] = {}

    def held_by(self, principal: Principal) -> int:
        return self._open.get((principal.tenant, principal.id), 0)

    def take(self, principal: Principal) -> Callable[[], None]:
        """One lease for `principal`, or `RateLimitedError`; returns its release (idempotent)."""
        key = (principal.tenant, principal.id)
        if self._open.get(key, 0) >= self.limit:
            raise RateLimitedError("open streams per principal", RETRY_AFTER_S)
        self._open[key] = self._open.get(key, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            left = self._open.get(key, 0) - 1
            if left > 0:
                self._open[key] = left
            else:
                self._open.pop(key, None)

        return release


class LeasedEventSourceResponse(EventSourceResponse):
    """An SSE response that gives its lease back when it ends: the client left, the stream
    finished, the server shut down or the response failed."""

    def __init__(self, *args: Any, release: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()
