"""Following the tenant's event stream (`GET /v1/events/stream`, Server-Sent Events).

`EventFollower` reads the stream, yields each ledger event once, and reconnects after a
dropped connection with `Last-Event-ID` set to the last position it yielded, so a consumer
sees every event in order, none twice. Keep `follower.position` to resume in a later process
(`after=`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import httpx
from pydantic import BaseModel, ConfigDict

from factledger.client.errors import TransportFailedError, error_for
from factledger.client.transport import RetryPolicy

STREAM_PATH = "/v1/events/stream"
LAST_EVENT_ID = "Last-Event-ID"


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
class _Frame:
    """One SSE event as read off the wire (comments and heartbeats never make one)."""

    data: list[str] = field(default_factory=list)
    event: str | None = None
    id: str | None = None


def parse_sse(lines: Iterable[str]) -> Iterator[_Frame]:
    """SSE framing: fields until a blank line; `:` lines (heartbeats) are skipped."""
    frame = _Frame()
    for line in lines:
        if not line:
            if frame.data:
                yield frame
            frame = _Frame()
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            frame.data.append(value)
        elif name == "event":
            frame.event = value
        elif name == "id":
            frame.id = value


class EventFollower:
    """An iterator of `LedgerEvent`s that reconnects and resumes by itself.

    Reconnects on transport errors and on 502/503/504 after the policy's backoff; the backoff
    starts again whenever an event arrives. Other statuses raise the client's error for them.
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        after: int | None = None,
        kinds: Sequence[str] = (),
        types: Sequence[str] = (),
        retry: RetryPolicy | None = None,
        read_timeout_s: float = 120.0,
    ) -> None:
        self._http = http
        # The server sends a heartbeat while idle; a read that waits far longer is a dead link.
        self._timeout = httpx.Timeout(10.0, read=read_timeout_s)
        self.position = after
        self._params = httpx.QueryParams({"kind": list(kinds), "type": list(types)})
        self._retry = retry or RetryPolicy()

    def __iter__(self) -> Iterator[LedgerEvent]:
        attempt = 0
        while True:
            try:
                for event in self._connect():
                    attempt = 0
                    yield event
            except httpx.TransportError as exc:
                wait = self._retry.delay(attempt)
                if attempt + 1 >= self._retry.attempts:
                    raise TransportFailedError(type(exc).__name__) from exc
                attempt += 1
                time.sleep(wait)

    def _connect(self) -> Iterator[LedgerEvent]:
        headers = {} if self.position is None else {LAST_EVENT_ID: str(self.position)}
        with self._http.stream(
            "GET", STREAM_PATH, params=self._params, headers=headers, timeout=self._timeout
        ) as response:
            if response.status_code in {502, 503, 504}:
                raise httpx.RemoteProtocolError(f"status {response.status_code}")
            if not response.is_success:
                response.read()
                raise error_for(response.status_code, _json_or_none(response))
            for frame in parse_sse(response.iter_lines()):
                event = LedgerEvent.model_validate(json.loads("\n".join(frame.data)))
                self.position = event.position
                yield event


def _json_or_none(response: httpx.Response) -> object:
    try:
        body: object = response.json()
    except ValueError:
        return None
    return body
