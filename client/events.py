"""Following the tenant's event stream (`GET /v1/events/stream`, Server-Sent Events).

A follower reads the stream, yields each ledger event once, and reconnects after a dropped
connection with `Last-Event-ID` set to the last position it yielded, so a consumer sees every
event in order, none twice. Keep `follower.position` to resume in a later process (`after=`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import httpx
from pydantic import BaseModel, ConfigDict

from factledger.client.errors import FactledgerError, TransportFailedError, error_for
from factledger.client.transport import RetryPolicy

STREAM_PATH = "/v1/events/stream"
LAST_EVENT_ID = "Last-Event-ID"
_RECONNECT_STATUSES = frozenset({502, 503, 504})


class LedgerEvent(BaseModel):
    """One ledger event of the tenant; `payload` lacks content when `content` is false."""

    model_config = ConfigDict(extra="ignore")

    position: int
    type: str
    subject_id: UUID
    subject_kind: str
    version: int
    timestamp: datetime | None
    content: bool
    payload: dict[str, Any]


@dataclass(slots=True)
class SseParser:
    """SSE framing, a line at a time: fields until a blank line; `:` lines (heartbeats) and
    events without data are skipped."""

    data: list[str] = field(default_factory=list)

    def feed(self, line: str) -> str | None:
        """The data of the event this line completes, if it completes one."""
        if not line:
            done, self.data = self.data, []
            return "\n".join(done) if done else None
        name, _, value = line.partition(":")
        if name == "data":
            self.data.append(value.removeprefix(" "))
        return None  # comments, `id` and `event` (the data repeats both)


@dataclass(frozen=True, slots=True)
class StreamQuery:
    after: int | None = None
    kinds: Sequence[str] = ()
    types: Sequence[str] = ()


class _Resuming:
    """What both followers share: where to resume, the request, and the reconnect budget."""

    def __init__(self, query: StreamQuery, retry: RetryPolicy | None, read_timeout_s: float):
        self.position = query.after
        self._params = httpx.QueryParams({"kind": list(query.kinds), "type": list(query.types)})
        self._retry = retry or RetryPolicy()
        # The server sends heartbeats while idle; a read that waits far longer is a dead link.
        self._timeout = httpx.Timeout(10.0, read=read_timeout_s)
        self._failures = 0

    def _request(self) -> dict[str, Any]:
        headers = {} if self.position is None else {LAST_EVENT_ID: str(self.position)}
        return {"params": self._params, "headers": headers, "timeout": self._timeout}

    def _event(self, data: str) -> LedgerEvent:
        event = LedgerEvent.model_validate(json.loads(data))
        self.position, self._failures = event.position, 0
        return event

    def _backoff(self, exc: Exception) -> float:
        """How long to wait before reconnecting; gives up after the policy's attempts in a row."""
        self._failures += 1
        if self._failures >= self._retry.attempts:
            raise TransportFailedError(type(exc).__name__) from exc
        return self._retry.delay(self._failures - 1)


class _ReconnectError(Exception):
    """The server answered a status worth reconnecting after (502, 503, 504)."""


def _refusal(response: httpx.Response) -> FactledgerError:
    try:
        body: object = response.json()
    except ValueError:
        body = None
    return error_for(response.status_code, body)


class EventFollower(_Resuming):
    """An endless iterator of `LedgerEvent`s that reconnects and resumes by itself.

    Reconnects on transport errors and on 502/503/504 after the policy's backoff (reset by
    every event); other statuses raise the client's error for them.
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
                yield from self._connect()
            except (httpx.TransportError, _ReconnectError) as exc:
                time.sleep(self._backoff(exc))

    def _connect(self) -> Iterator[LedgerEvent]:
        with self._http.stream("GET", STREAM_PATH, **self._request()) as response:
            if response.status_code in _RECONNECT_STATUSES:
                raise _ReconnectError(response.status_code)
            if not response.is_success:
                response.read()
                raise _refusal(response)
            parser = SseParser()
            for line in response.iter_lines():
                if (data := parser.feed(line)) is not None:
                    yield self._event(data)


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
                async for event in self._connect():
                    yield event
            except (httpx.TransportError, _ReconnectError) as exc:
                await asyncio.sleep(self._backoff(exc))

    async def _connect(self) -> AsyncIterator[LedgerEvent]:
        async with self._http.stream("GET", STREAM_PATH, **self._request()) as response:
            if response.status_code in _RECONNECT_STATUSES:
                raise _ReconnectError(response.status_code)
            if not response.is_success:
                await response.aread()
                raise _refusal(response)
            parser = SseParser()
            async for line in response.aiter_lines():
                if (data := parser.feed(line)) is not None:
                    yield self._event(data)
