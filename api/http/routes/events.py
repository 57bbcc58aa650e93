"""A subject's events for analysts: its stream in order, paged by stream version.

They are read through the ledger's `history`: a hot standby's when the request may read one
(with the caller's `Factledger-Position`, never one older than the caller's writes).

Values of forgotten fields are redacted in what this endpoint returns, so forgetting is not
undone by reading the history: the proposal stays visible as a fact of the history, its value
and quote do not.
"""

from __future__ import annotations

import asyncio
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query

from factledger.api.http.deps import Analyst, LedgerDep, SubjectIdDep
from factledger.api.http.schemas.common import ERRORS
from factledger.api.http.schemas.profile import EventOut, EventPage
from factledger.application.ledger.event_views import event_payload
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import FactForgotten

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["events"], responses=ERRORS)  # type: ignore[arg-type]


def _page(ledger: Ledger, subject_id: UUID, after: int, limit: int) -> EventPage:
    stream = list(ledger.history.get(subject_id))
    forgotten = {e.field for e in stream if isinstance(e, FactForgotten) and e.field is not None}
    page = [e for e in stream if e.originator_version > after][: limit + 1]
    events = [
        EventOut(
            version=e.originator_version,
            topic=str(getattr(e, "TOPIC", type(e).__name__)),
            timestamp=getattr(e, "timestamp"),  # noqa: B009 - not on the library's protocol
            payload=event_payload(e, forgotten),
        )
        for e in page[:limit]
    ]
    more = len(page) > limit
    return EventPage(
        subject_id=subject_id, events=events, next_after=events[-1].version if more else None
    )


@router.get("/events", summary="The subject's events in order (analysts, reviewers, admins)")
async def events(
    principal: Analyst,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    after: Annotated[int, Query(ge=0, le=10_000_000, description="Stream version.")] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> EventPage:
    return await asyncio.to_thread(_page, ledger, subject_id, after, limit)
