"""The tenant's review queue: pages with cursors and exact counts, filters over every pending
proposal, the groups of identical proposals, and one decision on many changes.

The queue is always the token's tenant's; its reads come from the review queue projection's
indexed rows, never from a scan of documents.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import replace
from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from fastapi import APIRouter, Depends, Header, Query, Response

from factledger.adapters.read_routing import require_views_at, standby_allowed
from factledger.api.http.auth import Principal
from factledger.api.http.deps import LedgerDep, Reviewer, StateDep
from factledger.api.http.errors import (
    InvalidParameterError,
    SelectionChangedError,
    ServiceUnavailableError,
)
from factledger.api.http.routes.proposals import actor_of
from factledger.api.http.schemas.common import ERRORS
from factledger.api.http.schemas.queue import (
    FILTER_TEXT,
    GROUP_PATTERN,
    PROPOSER_PATTERN,
    DecideManyIn,
    DecisionsOut,
    GroupPageOut,
    PickOutcomeOut,
    QueuedOut,
    QueueFilterIn,
    QueuePageOut,
)
from factledger.api.http.views_caught_up import catch_up_before_read
from factledger.application.review_queue.cursor import (
    AGE_PATTERN,
    CURSOR_PATTERN,
    BadCursorError,
    decode_cursor,
    decode_snapshot,
    encode_cursor,
    encode_snapshot,
    parse_age,
)
from factledger.application.review_queue.decisions import (
    Pick,
    Verdict,
    decide_each,
    derived_command_id,
)
from factledger.application.review_queue.ports import ReviewQueue
from factledger.application.review_queue.queue import MAX_PAGE, MAX_TEXT, QueueCursor, QueueFilter
from factledger.application.sessions.field_screening import screen_reason
from factledger.domain.provenance import Origin

router = APIRouter(prefix="/v1/proposals/pending", tags=["proposals"], responses=ERRORS)  # type: ignore[arg-type]
Text = Annotated[str | None, Query(max_length=FILTER_TEXT)]


async def get_queue(state: StateDep, response: Response) -> ReviewQueue:
    """The review queue, caught up with the log (read-your-writes for this process)."""
    ports = state.require_ports()
    await catch_up_before_read(ports, response)
    if ports.queue is None or ports.queue_projection is None:
        raise ServiceUnavailableError("the review queue is not served by this process")
    if standby_allowed():
        # A standby's queue serves the read only once it is as far as the primary's now.
        require_views_at(await asyncio.to_thread(ports.queue_projection.position))
    return ports.queue


QueueDep = Annotated[ReviewQueue, Depends(get_queue)]


def queue_filter(
    now: datetime,
    *,
    kind: str | None = None,
    field: str | None = None,
    origin: Origin | None = None,
    proposer: str | None = None,
    conversation_type: str | None = None,
    q: str | None = None,
    older_than: str | None = None,
    newer_than: str | None = None,
    group: str | None = None,
    subject_id: UUID | None = None,
) -> QueueFilter:
    """The filter the parameters name (blank ones are unset); ages are counted from `now`."""
    return QueueFilter(
        kind=kind or None,
        field=field or None,
        origin=origin,
        proposer=proposer or None,
        conversation_type=conversation_type or None,
        text=(q or "").strip() or None,
        proposed_before=None if not older_than else now - parse_age(older_than),
        proposed_after=None if not newer_than else now - parse_age(newer_than),
        group=group or None,
        subject_id=None if subject_id is None else str(subject_id),
    )


def filter_params(
    state: StateDep,
    kind: Annotated[str | None, Query(max_length=FILTER_TEXT, description="Subject kind.")] = None,
    field: Text = None,
    origin: Annotated[
        Literal["stated", "inferred", ""] | None, Query(description="Blank: either.")
    ] = None,
    proposer: Annotated[
        str | None, Query(pattern=PROPOSER_PATTERN, description="`kind:id`, e.g. `model:x`.")
    ] = None,
    conversation_type: Text = None,
    q: Annotated[
        str | None,
        Query(max_length=MAX_TEXT, description="Part of a field name or a subject reference."),
    ] = None,
    older_than: Annotated[
        str | None, Query(pattern=AGE_PATTERN, description="Recorded longer ago: `7d`, `12h`.")
    ] = None,
    newer_than: Annotated[
        str | None, Query(pattern=AGE_PATTERN, description="Recorded more recently: `30m`.")
    ] = None,
    group: Annotated[str | None, Query(pattern=GROUP_PATTERN)] = None,
    subject_id: Annotated[UUID | None, Query()] = None,
) -> QueueFilter:
    return queue_filter(
        state.require_ports().ledger.clock.now(),
        kind=kind,
        field=field,
        origin=Origin(origin) if origin else None,
        proposer=proposer,
        conversation_type=conversation_type,
        q=q,
        older_than=older_than,
        newer_than=newer_than,
        group=group,
        subject_id=subject_id,
    )


FilterDep = Annotated[QueueFilter, Depends(filter_params)]


def parse_cursor(text: str | None) -> QueueCursor:
    if not text:
        return QueueCursor()
    try:
        return decode_cursor(text)
    except BadCursorError:
        raise InvalidParameterError("cursor", "is not a cursor this queue gave") from None


@router.get("", summary="The tenant's review queue, oldest first, with an exact count")
async def pending(
    principal: Reviewer,
    queue: QueueDep,
    where: FilterDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
) -> QueuePageOut:
    """Every filter narrows every pending proposal (not a first batch of them); pass
    `next_cursor` or `previous_cursor` back as `cursor` to turn the page."""
    page = await asyncio.to_thread(queue.page, principal.tenant, where, parse_cursor(cursor), limit)
    return QueuePageOut(
        items=[QueuedOut.of_entry(e) for e in page.entries],
        total=page.total,
        next_cursor=None if page.next_cursor is None else encode_cursor(page.next_cursor),
        previous_cursor=None
        if page.previous_cursor is None
        else encode_cursor(page.previous_cursor),
        snapshot=encode_snapshot(page.last_position) if page.last_position else None,
    )


@router.get("/groups", summary="Identical proposals across subjects, largest group first")
async def groups(
    principal: Reviewer,
    queue: QueueDep,
    where: FilterDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> GroupPageOut:
    """A group is the proposals of one field, operation, value, condition and origin; decide
    one with `POST /v1/proposals/pending/decisions` and the filter `group`."""
    found = await asyncio.to_thread(
        queue.groups, principal.tenant, where, offset=offset, limit=limit
    )
    return GroupPageOut(
        groups=[GroupPageOut.group_out(g) for g in found.groups],
        total=found.total,
        next_offset=found.next_offset,
        snapshot=encode_snapshot(found.last_position) if found.last_position else None,
    )


def _request_id(principal: Principal, key: str | None) -> str:
    """The base of the decisions' command ids: the caller's key makes a retry decide nothing
    twice (each change's command id is derived from it)."""
    base = key or secrets.token_hex(16)
    parts = (principal.tenant, principal.id, "pending-decisions", base)
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def _filter_of(body: QueueFilterIn, now: datetime, up_to: int) -> QueueFilter:
    fields = body.model_dump(exclude={"origin"})
    origin = None if body.origin is None else Origin(body.origin)
    return replace(queue_filter(now, origin=origin, **fields), up_to=up_to)


@router.post(
    "/decisions", summary="One decision on many pending changes (a page, a filter, a group)"
)
async def decide(
    body: DecideManyIn,
    principal: Reviewer,
    state: StateDep,
    ledger: LedgerDep,
    queue: QueueDep,
    idempotency_key: Annotated[
        str | None, Header(alias="Idempotency-Key", pattern=r"^[A-Za-z0-9._:-]{8,128}$")
    ] = None,
) -> DecisionsOut:
    """Each change gets its own decision event on its own subject. With `filter`, every change
    it matches up to `snapshot` is decided; more of them than `expected_count` is a 409 (new
    proposals arrived: read the count again). Send an `Idempotency-Key` to make a retry safe."""
    if body.filter is not None:
        try:
            up_to = decode_snapshot(body.snapshot or "")
        except BadCursorError:
            raise InvalidParameterError("snapshot", "is not a snapshot this queue gave") from None
        expected = body.expected_count or 0
        where = _filter_of(body.filter, state.require_ports().ledger.clock.now(), up_to)
        selected = await asyncio.to_thread(
            queue.select, principal.tenant, where, limit=expected + 1
        )
        if len(selected) > expected:
            raise SelectionChangedError(
                f"expected_count: the filter matches more than {expected} pending changes "
                "now; read the count again and confirm it"
            )
        picks = [Pick(UUID(s.subject_id_text), UUID(s.change_id_text)) for s in selected]
    else:
        picks = [Pick(c.subject_id, c.change_id) for c in body.changes or []]
    approving = body.decision == "approve"
    said = body.note if approving else body.reason
    await screen_reason(state.require_ports().safety, said, "note" if approving else "reason")
    verdict = Verdict(
        approve=body.decision == "approve",
        by=actor_of(principal),
        text=(body.note if body.decision == "approve" else body.reason) or None,
    )
    base = _request_id(principal, idempotency_key)
    outcomes = await asyncio.to_thread(
        decide_each,
        ledger,
        principal.tenant,
        picks,
        verdict,
        lambda p: derived_command_id(base, p.change_id),
    )
    refused = sum(1 for o in outcomes if o.error_type is not None)
    return DecisionsOut(
        decided=sum(1 for o in outcomes if o.applied),
        refused=refused,
        outcomes=[
            PickOutcomeOut(
                subject_id=o.pick.subject_id,
                change_id=o.pick.change_id,
                applied=o.applied,
                error_type=o.error_type,
                detail=o.detail,
            )
            for o in outcomes
        ],
    )
