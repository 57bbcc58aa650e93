"""`GET /v1/events/stream`: every ledger event of the caller's tenant, in order, as
Server-Sent Events.

- Each event's SSE `id` is an opaque cursor (its position in the ledger's log, sealed for the
  tenant: the log's positions would show other tenants' write volume); a client that
  reconnects with `Last-Event-ID` (or `?after=`) set to one gets every later event once, none
  skipped, none repeated. `0` is the start.
- `kind` (subject kinds) and `type` (event types) narrow the stream; an unknown or malformed
  value is a 422 naming the parameter.
- Content (messages, values, quotes, summaries, notes, reasons) only for the roles that read
  subjects (service, admin); analysts get the events without it. Forgotten values are redacted
  for everyone, as on a subject's event pages.
- The log is read in short batches on a worker thread, so a stream holds neither the event loop
  nor a database connection between reads; an idle stream sends a heartbeat comment every
  `heartbeat_s`, and a store that fails a read is tried again (the stream stays open).
- The stream ends when its token does (its `exp`, with the verifier's leeway): nothing written
  after that reaches it, and the client reconnects with a fresh token and `Last-Event-ID`. It
  ends too when the client goes away or the server shuts down. One principal holds at most
  `max_per_principal` streams open in one process; one more is a 429 with `Retry-After`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

import structlog
from fastapi import APIRouter, Header, Query
from sse_starlette import EventSourceResponse, ServerSentEvent

from factledger.api.http.auth import Principal, Role
from factledger.api.http.deps import LedgerDep, StateDep, require_roles
from factledger.api.http.errors import InvalidParameterError
from factledger.api.http.event_views import reads_content
from factledger.api.http.schemas.common import ERRORS
from factledger.api.http.schemas.subjects import KIND_PATTERN
from factledger.api.http.stream_leases import LeasedEventSourceResponse
from factledger.api.settings import EventStreamSettings
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.cursors import START, InvalidCursorError, StreamCursors
from factledger.application.ledger.event_log import (
    TOPIC_BY_TYPE,
    LoggedEvent,
    LogPage,
    TenantEventLog,
)
from factledger.application.ledger.event_views import event_body

router = APIRouter(prefix="/v1/events", tags=["events"], responses=ERRORS)  # type: ignore[arg-type]
log = structlog.get_logger(__name__)
StreamReader = Annotated[Principal, require_roles(Role.ANALYST, Role.ADMIN, Role.SERVICE)]
LAST_EVENT_ID = "Last-Event-ID"
MAX_CURSOR = 64
_KIND = re.compile(KIND_PATTERN)
HEARTBEAT = "heartbeat"
EXPIRY_COMMENT = "token expired"  # the comment a stream ends with when its token does
STORE_RETRY_S = 1.0


def _position(cursors: StreamCursors, tenant: str, raw: str | None, after: str) -> int:
    """Where to start: the header's cursor, else the query's (`0`: the start)."""
    name, cursor = (LAST_EVENT_ID, raw) if raw is not None else ("after", after)
    if len(cursor) > MAX_CURSOR:
        raise InvalidParameterError(name, "must be a cursor this stream sent, or 0")
    try:
        return cursors.position(tenant, cursor)
    except InvalidCursorError:
        raise InvalidParameterError(name, "must be a cursor this stream sent, or 0") from None


def _checked(values: list[str], field: str, known: Callable[[str], bool]) -> tuple[str, ...]:
    for value in values:
        if not known(value):
            raise InvalidParameterError(field, "is not one of the allowed values")
    return tuple(dict.fromkeys(values))


@router.get(
    "/stream",
    summary="The tenant's ledger events as Server-Sent Events (analysts, services, admins)",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def stream(
    principal: StreamReader,
    ledger: LedgerDep,
    state: StateDep,
    kind: Annotated[
        list[str] | None, Query(description="Subject kinds to keep (repeatable).")
    ] = None,
    event_type: Annotated[
        list[str] | None,
        Query(alias="type", description=f"Event types to keep: {', '.join(TOPIC_BY_TYPE)}."),
    ] = None,
    after: Annotated[
        str,
        Query(
            max_length=MAX_CURSOR,
            description="Start after this event's cursor (an SSE `id`); `0`: the start.",
        ),
    ] = START,
    last_event_id: Annotated[str | None, Header(alias=LAST_EVENT_ID)] = None,
) -> EventSourceResponse:
    source = TenantEventLog(ledger)
    start = await asyncio.to_thread(
        _position, source.cursors, principal.tenant, last_event_id, after
    )
    kinds = _checked(kind or [], "kind", lambda k: _KIND.fullmatch(k) is not None)
    types = _checked(event_type or [], "type", lambda t: t in TOPIC_BY_TYPE)
    query = _Query(
        principal.tenant, start, kinds, types, reads_content(principal), principal.expires_at
    )
    release = state.streams.take(principal)
    return LeasedEventSourceResponse(
        _follow(source, query, state.event_stream),
        release=release,
        ping=state.event_stream.heartbeat_s,
        ping_message_factory=lambda: ServerSentEvent(comment=HEARTBEAT),
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


@dataclass(frozen=True, slots=True)
class _Query:
    tenant: str
    after: int
    kinds: tuple[str, ...]
    types: tuple[str, ...]
    content: bool
    ends_at: float | None  # unix seconds: when the token stops being accepted

    def left_s(self) -> float:
        """Seconds until the stream must end (infinite without an end)."""
        return float("inf") if self.ends_at is None else self.ends_at - time.time()


async def _follow(
    source: TenantEventLog, query: _Query, settings: EventStreamSettings
) -> AsyncIterator[ServerSentEvent]:
    position, sent, ended = query.after, 0, "client_or_server"
    log.info("events.stream_opened", tenant=query.tenant, after=position)
    try:
        while query.left_s() > 0:
            try:
                page, forgotten = await asyncio.to_thread(_read, source, query, position, settings)
            except StoreUnavailableError as exc:
                # The store is usually back within seconds: keep the stream, try again.
                log.warning("events.stream_read_failed", error_type=type(exc).__name__)
                await _pause(max(settings.poll_s, STORE_RETRY_S), query)
                continue
            for logged in page.events:
                if query.left_s() <= 0:  # read in time, but not sent after the token ended
                    break
                yield _sse(logged, forgotten.get(logged.subject_id, set()), query.content)
                sent, position = sent + 1, logged.position
            else:
                position = page.scanned_to
                if not page.more:
                    await _pause(settings.poll_s, query)
        ended = "token_expired"
        yield ServerSentEvent(comment=EXPIRY_COMMENT)
    finally:
        # Also on a client that went away and on shutdown (the generator is cancelled).
        log.info(
            "events.stream_closed", tenant=query.tenant, position=position, sent=sent, why=ended
        )


async def _pause(seconds: float, query: _Query) -> None:
    """Sleeps `seconds`, or less when the token ends sooner."""
    await asyncio.sleep(max(0.0, min(seconds, query.left_s())))


def _read(
    source: TenantEventLog, query: _Query, after: int, settings: EventStreamSettings
) -> tuple[LogPage, dict[UUID, set[str]]]:
    page = source.read(
        query.tenant, after=after, limit=settings.batch, types=query.types, kinds=query.kinds
    )
    proposals = [e.subject_id for e in page.events if e.type == "change_proposed"]
    return page, source.forgotten_fields(proposals)


def _sse(logged: LoggedEvent, forgotten: set[str], content: bool) -> ServerSentEvent:
    body = event_body(logged, forgotten, content=content)
    return ServerSentEvent(
        data=json.dumps(body, separators=(",", ":")), id=logged.cursor, event=logged.type
    )
