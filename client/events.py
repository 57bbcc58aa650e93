"""Following the tenant's event stream (`GET /v1/events/stream`, Server-Sent Events).

A follower reads the stream, yields each ledger event once, and reconnects after a dropped
connection with `Last-Event-ID` set to the cursor of the last event it yielded, so a consumer
sees every event in order, none twice. Keep `follower.cursor` to resume in a later process
(`after=`). A cursor is opaque: the service seals the log's position in it.

The framing is httpx-sse's; the reconnect loop is tenacity's. A server's `retry:` field sets
the wait before each reconnect, as the SSE specification says; until it sends one, the
client's `RetryPolicy` backoff applies.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import httpx
import tenacity
from httpx_sse import ServerSentEvent, aconnect_sse, connect_sse
from pydantic import BaseModel, ConfigDict
from tenacity import RetryCallState

from factledger.client.errors import FactledgerError, TransportFailedError, error_for
from factledger.client.transport import POSITION_HEADER, RetryPolicy

STREAM_PATH = "/v1/events/stream"
LAST_EVENT_ID = "Last-Event-ID"
_RECONNECT_STATUSES = frozenset({502, 503, 504})


class LedgerEvent(BaseModel):
    """One ledger event of the tenant; `payload` lacks content when `content` is false."""

    model_config = ConfigDict(extra="ignore")

    cursor: str  # where this event stands in the tenant's stream (opaque; resume after it)
    type: str
    subject_id: UUID
    subject_kind: str
    version: int
    timestamp: datetime | None
    content: bool
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StreamQuery:
    after: str | None = None  # a cursor (`LedgerEvent.cursor`); None: the start
    kinds: Sequence[str] = ()
    types: Sequence[str] = ()
    # The client's latest write position: with standbys, the stream never starts older.
    position: str | None = None


class _Resuming:
    """What both followers share: where to resume, the request, and the reconnect loop.

    One streak of reconnects is one tenacity loop: it gives up after the policy's attempts in
    a row. A connection that yielded events before it dropped ends its streak, so the next
    one starts afresh (after the reconnect wait).
    """

    def __init__(self, query: StreamQuery, retry: RetryPolicy | None, read_timeout_s: float):
        self.cursor = query.after
        self._position = query.position
        self._params = httpx.QueryParams({"kind": list(query.kinds), "type": list(query.types)})
        self._retry = retry or RetryPolicy()
        # The server sends heartbeats while idle; a read that waits far longer is a dead link.
        self._timeout = httpx.Timeout(10.0, read=read_timeout_s)
        self._server_retry_s: float | None = None
        self._backoff = self._retry.backoff()

    def _request(self) -> dict[str, Any]:
        headers = {} if self.cursor is None else {LAST_EVENT_ID: self.cursor}
        if self._position is not None:
            headers[POSITION_HEADER] = self._position
        return {"params": self._params, "headers": headers, "timeout": self._timeout}

    def _streak(self) -> dict[str, Any]:
        return {
            "retry": tenacity.retry_if_exception_type((httpx.TransportError, _ReconnectError)),
            "stop": tenacity.stop_after_attempt(self._retry.attempts),
            "wait": self._reconnect_wait,
            "retry_error_callback": _transport_failed,
        }

    def _reconnect_wait(self, retry_state: RetryCallState) -> float:
        if self._server_retry_s is not None:
            return self._server_retry_s
        return float(self._backoff(retry_state))

    def _event(self, sse: ServerSentEvent) -> LedgerEvent | None:
        """The ledger event `sse` carries, if any; records the server's `retry:` on the way."""
        if sse.retry is not None:
            self._server_retry_s = sse.retry / 1000
        if not sse.data:
            return None  # a `retry:`-only frame
        event = LedgerEvent.model_validate(json.loads(sse.data))
        self.cursor = event.cursor
        return event

    def _first_wait(self) -> float:
        """The wait before the first reconnect of a streak (a fresh loop's first retry)."""
        return self._reconnect_wait(RetryCallState(tenacity.Retrying(), None, (), {}))


class _ReconnectError(Exception):
    """The server answered a status worth reconnecting after (502, 503, 504)."""


class _DroppedAfterEventsError(Exception):
    """A connection that had yielded events dropped: a fresh streak of reconnects follows."""


def _transport_failed(retry_state: RetryCallState) -> None:
    exc = None if retry_state.outcome is None else retry_state.outcome.exception()
    raise TransportFailedError(type(exc).__name__) from exc


def _refusal(response: httpx.Response) -> FactledgerError:
    try:
        body: object = response.json()
    except ValueError:
        body = None
    return error_for(response.status_code, body)


class EventFollower(_Resuming):
    """An endless iterator of `LedgerEvent`s that reconnects and resumes by itself.

    Reconnects on transport errors and on 502/503/504 after the server's `retry:` or the
    policy's backoff; other statuses raise the client's error for them.
    """

    def __init__(
        self,
        http: httpx.Client,
        query: StreamQuery,
        *,
        retry: RetryPolicy | None = None,
        read_timeout_s: float = 120.0,
    ) -> None:
        super().__init__(query, retry, read_timeout_s)
        self._http = http

    def __iter__(self) -> Iterator[LedgerEvent]:
        while True:
            try:
                for attempt in tenacity.Retrying(**self._streak()):
                    with attempt:
                        yield from self._connect()
            except _DroppedAfterEventsError:
                time.sleep(self._first_wait())

    def _connect(self) -> Iterator[LedgerEvent]:
        yielded = False
        try:
            with connect_sse(self._http, "GET", STREAM_PATH, **self._request()) as source:
                response = source.response
                if response.status_code in _RECONNECT_STATUSES:
                    raise _ReconnectError(response.status_code)
                if not response.is_success:
                    response.read()
                    raise _refusal(response)
                for sse in source.iter_sse():
                    if (event := self._event(sse)) is not None:
                        yielded = True
                        yield event
        except (httpx.TransportError, _ReconnectError) as exc:
            if yielded:
                raise _DroppedAfterEventsError from exc
            raise


class AsyncEventFollower(_Resuming):
    """The async twin of `EventFollower`."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        query: StreamQuery,
        *,
        retry: RetryPolicy | None = None,
        read_timeout_s: float = 120.0,
    ) -> None:
        super().__init__(query, retry, read_timeout_s)
        self._http = http

    async def __aiter__(self) -> AsyncIterator[LedgerEvent]:
        while True:
            try:
                async for attempt in tenacity.AsyncRetrying(**self._streak()):
                    with attempt:
                        async for event in self._connect():
                            yield event
            except _DroppedAfterEventsError:
                await asyncio.sleep(self._first_wait())

    async def _connect(self) -> AsyncIterator[LedgerEvent]:
        yielded = False
        try:
            async with aconnect_sse(self._http, "GET", STREAM_PATH, **self._request()) as source:
                response = source.response
                if response.status_code in _RECONNECT_STATUSES:
                    raise _ReconnectError(response.status_code)
                if not response.is_success:
                    await response.aread()
                    raise _refusal(response)
                async for sse in source.aiter_sse():
                    if (event := self._event(sse)) is not None:
                        yielded = True
                        yield event
        except (httpx.TransportError, _ReconnectError) as exc:
            if yielded:
                raise _DroppedAfterEventsError from exc
            raise
