"""The review queue, one proposal with its evidence, and the decisions on them.

A decision is the API's command with the reviewer as actor (`console.actions`). A decision the
ledger refuses (the field changed meanwhile, someone decided first) is shown as such: one by
one it is the error page with the proposal's current state a click away, in bulk each item's
outcome is listed and the page answers 409.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal
from urllib.parse import urlencode
from uuid import UUID

import structlog
from fastapi import APIRouter, Depends, Form, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from factledger.api.console.actions import NONCE_PATTERN, Decision, Outcome, decide_all, decide_in
from factledger.api.console.guard import CSRF, ConsoleDep, Reviewing, refuse_cross_site
from factledger.api.console.guard import subject_in_tenant as checked
from factledger.api.console.pages import render_page, see_other
from factledger.api.console.queue_view import queue_groups, queue_page
from factledger.api.console.session import ConsoleSession
from factledger.api.console.subject_view import proposal_page, queued_context
from factledger.api.http.deps import LedgerDep, StateDep
from factledger.api.http.errors import InvalidParameterError, SelectionChangedError
from factledger.api.http.routes.profile import ProfilesDep
from factledger.api.http.routes.queue import FilterDep, QueueDep, parse_cursor, queue_filter
from factledger.api.http.schemas.queue import FILTER_TEXT, GROUP_PATTERN, PROPOSER_PATTERN
from factledger.application.ledger.ports import ProfileReader
from factledger.application.review_queue.cursor import (
    AGE_PATTERN,
    CURSOR_PATTERN,
    BadCursorError,
    decode_snapshot,
    encode_cursor,
    encode_snapshot,
)
from factledger.application.review_queue.decisions import MAX_FILTER_DECISION
from factledger.application.review_queue.ports import ReviewQueue
from factledger.application.review_queue.queue import MAX_TEXT, QueueCursor, QueueFilter
from factledger.application.sessions.field_screening import screen_reason
from factledger.domain.proposal import MAX_NOTE
from factledger.domain.provenance import MAX_REASON, Origin

router = APIRouter()
log = structlog.get_logger(__name__)
Nonce = Annotated[str, Form(pattern=NONCE_PATTERN)]
MAX_BULK = 200


def _query(request: Request, **changes: str | None) -> str:
    """The queue's own query string with `changes` (None: dropped), for links and redirects."""
    params = {k: v for k, v in request.query_params.items() if k not in ("notice", *changes)}
    params.update({k: v for k, v in changes.items() if v})
    return urlencode(params)


@router.get("/queue", response_class=HTMLResponse)
async def queue(
    request: Request,
    session: Reviewing,
    profiles: ProfilesDep,
    reviews: QueueDep,
    where: FilterDep,
    cursor: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
    view: Annotated[Literal["items", "groups"], Query()] = "items",
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> HTMLResponse:
    if view == "groups":
        choices, groups = await asyncio.gather(
            asyncio.to_thread(reviews.choices, session.tenant),
            asyncio.to_thread(queue_groups, reviews, session.tenant, where, offset),
        )
        return render_page(
            request,
            "queue_groups.html",
            session,
            groups=groups,
            offset=offset,
            snapshot=encode_snapshot(groups.last_position) if groups.last_position else "",
            params=request.query_params,
            choices=choices,
            query=lambda **c: _query(request, **c),
        )
    shown = await items_view(request, session, profiles, reviews, where, cursor)
    return render_page(request, "queue.html", session, **shown)


async def items_view(
    request: Request,
    session: ConsoleSession,
    profiles: ProfileReader,
    reviews: ReviewQueue,
    where: QueueFilter,
    cursor: str | None,
) -> dict[str, Any]:
    """What the queue's items view (`queue.html`) shows inside the console's frame."""
    # The filters' choices and the page are independent reads: side by side, not one after
    # the other.
    choices, shown = await asyncio.gather(
        asyncio.to_thread(reviews.choices, session.tenant),
        asyncio.to_thread(
            queue_page, reviews, profiles, session.tenant, where, parse_cursor(cursor)
        ),
    )
    page = shown.page
    return {
        "items": shown.items,
        "page": page,
        "params": request.query_params,
        "filtered": not where.is_empty(),
        "choices": choices,
        "snapshot": encode_snapshot(page.last_position) if page.last_position else "",
        "next_cursor": None if page.next_cursor is None else encode_cursor(page.next_cursor),
        "previous_cursor": None
        if page.previous_cursor is None
        else encode_cursor(page.previous_cursor),
        "query": lambda **c: _query(request, **c),
        "back": f"/console/queue?{_query(request)}",
    }


@router.get("/subjects/{subject_id}/proposals/{change_id}", response_class=HTMLResponse)
async def proposal(
    request: Request,
    subject_id: UUID,
    change_id: UUID,
    session: Reviewing,
    console: ConsoleDep,
    ledger: LedgerDep,
    profiles: ProfilesDep,
) -> HTMLResponse:
    await checked(console, session, subject_id)
    page = await asyncio.to_thread(
        proposal_page, ledger, profiles, session.tenant, subject_id, change_id
    )
    return render_page(request, "proposal.html", session, page=page)


@router.get(
    "/subjects/{subject_id}/proposals/{change_id}/context",
    response_class=HTMLResponse,
    dependencies=[Depends(refuse_cross_site)],
)
async def proposal_context(
    request: Request,
    subject_id: UUID,
    change_id: UUID,
    session: Reviewing,
    console: ConsoleDep,
    ledger: LedgerDep,
) -> HTMLResponse:
    """A queued change's evidence in context, as a fragment the queue page loads when the
    reviewer opens it (the page itself carries only the quote). The same session, role and
    tenant checks as the proposal's page; a fetch another site starts is refused, and the
    console's headers (CSP, `no-store`) apply as to any page."""
    await checked(console, session, subject_id)
    shown = await asyncio.to_thread(queued_context, ledger, session.tenant, subject_id, change_id)
    return render_page(request, "queue_context.html", session, shown=shown)


@router.post("/subjects/{subject_id}/proposals/{change_id}/approve", dependencies=[CSRF])
async def approve(
    subject_id: UUID,
    change_id: UUID,
    session: Reviewing,
    console: ConsoleDep,
    ledger: LedgerDep,
    nonce: Nonce,
    note: Annotated[str, Form(max_length=MAX_NOTE)] = "",
) -> RedirectResponse:
    await checked(console, session, subject_id)
    decision = Decision(subject_id, change_id, approve=True, text=note.strip() or None)
    await decide_in(console.api, ledger, session, decision, nonce)
    return see_other("/console/queue", "approved")


@router.post("/subjects/{subject_id}/proposals/{change_id}/reject", dependencies=[CSRF])
async def reject(
    subject_id: UUID,
    change_id: UUID,
    session: Reviewing,
    console: ConsoleDep,
    ledger: LedgerDep,
    nonce: Nonce,
    reason: Annotated[str, Form(max_length=MAX_REASON)] = "",
) -> RedirectResponse:
    if not reason.strip():
        raise InvalidParameterError("reason", "is required")
    await checked(console, session, subject_id)
    decision = Decision(subject_id, change_id, approve=False, text=reason.strip())
    await decide_in(console.api, ledger, session, decision, nonce)
    return see_other("/console/queue", "rejected")


def _decisions(picked: list[str], *, approve: bool, text: str | None) -> list[Decision]:
    decisions = []
    for value in picked:
        subject, _, change = value.partition("/")
        try:
            decisions.append(Decision(UUID(subject), UUID(change), approve, text))
        except ValueError:
            raise InvalidParameterError("change", "must be <subject id>/<change id>") from None
    return decisions


def _back(value: str) -> str:
    """Where a decision taken from the queue returns: the queue itself, never elsewhere."""
    if not value.startswith("/console/queue?") and value != "/console/queue":
        raise InvalidParameterError("back", "must be the queue's own address")
    return value


def _outcomes_page(
    request: Request, session: ConsoleSession, outcomes: list[Outcome], action: str
) -> HTMLResponse:
    refused = [o.error_type for o in outcomes if o.error_type is not None]
    log.info(
        "console.decisions_taken",
        action=action,
        applied=len(outcomes) - len(refused),
        refused=len(refused),
        error_types=sorted(set(refused)),
    )
    return render_page(
        request,
        "outcomes.html",
        session,
        status_code=409 if refused else 200,
        outcomes=outcomes,
        action=action,
    )


@router.post("/queue/decide", dependencies=[CSRF], response_class=HTMLResponse)
async def decide_many(
    request: Request,
    session: Reviewing,
    console: ConsoleDep,
    ledger: LedgerDep,
    nonce: Nonce,
    action: Annotated[str, Form(pattern=r"^(approve|reject)$")],
    change: Annotated[list[str], Form(max_length=MAX_BULK)],
    text: Annotated[str, Form(max_length=MAX_REASON)] = "",
    back: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    """Approve (note optional) or reject (reason required) every ticked proposal. With
    `back` (the queue's address, as the keyboard's decisions send it) and nothing refused,
    the queue is shown again."""
    approve = action == "approve"
    if not approve and not text.strip():
        raise InvalidParameterError("text", "a reason is required to reject")
    said = text.strip() or None
    await screen_reason(console.api.require_ports().safety, said, "text")
    decisions = _decisions(change, approve=approve, text=said)
    for subject_id in {d.subject_id for d in decisions}:
        await checked(console, session, subject_id)
    outcomes = await decide_all(console.api, ledger, session, decisions, nonce)
    if back and all(o.error_type is None for o in outcomes):
        return see_other(_back(back), "approved" if approve else "rejected")
    return _outcomes_page(request, session, outcomes, action)


FormText = Annotated[str, Form(max_length=FILTER_TEXT)]


@dataclass(frozen=True, slots=True)
class _FormFilter:
    """The queue's filters as a confirmation form carries them (blank: unset)."""

    kind: str = ""
    field: str = ""
    origin: str = ""
    proposer: str = ""
    conversation_type: str = ""
    q: str = ""
    older_than: str = ""
    newer_than: str = ""
    group: str = ""


def _form_filter(
    kind: FormText = "",
    field: FormText = "",
    origin: Annotated[str, Form(pattern=r"^(stated|inferred)?$")] = "",
    proposer: Annotated[str, Form(pattern=PROPOSER_PATTERN)] = "",
    conversation_type: FormText = "",
    q: Annotated[str, Form(max_length=MAX_TEXT)] = "",
    older_than: Annotated[str, Form(pattern=AGE_PATTERN)] = "",
    newer_than: Annotated[str, Form(pattern=AGE_PATTERN)] = "",
    group: Annotated[str, Form(pattern=GROUP_PATTERN)] = "",
) -> _FormFilter:
    return _FormFilter(
        kind, field, origin, proposer, conversation_type, q, older_than, newer_than, group
    )


def _described(where: QueueFilter) -> list[tuple[str, str]]:
    """The filter in words, for the confirmation."""
    named = [
        ("subject kind", where.kind),
        ("field", where.field),
        ("origin", None if where.origin is None else where.origin.value),
        ("proposed by", where.proposer),
        ("conversation type", where.conversation_type),
        ("field or subject containing", where.text),
        ("group", where.group),
    ]
    return [(label, value) for label, value in named if value]


@router.get("/queue/confirm", response_class=HTMLResponse)
async def confirm_all(
    request: Request,
    session: Reviewing,
    reviews: QueueDep,
    where: FilterDep,
    action: Annotated[Literal["approve", "reject"], Query()],
    snapshot: Annotated[str, Query(pattern=CURSOR_PATTERN)],
) -> HTMLResponse:
    """Asks before one decision on every proposal the filter matches, saying exactly how many."""
    up_to = _snapshot(snapshot)
    limited = replace(where, up_to=up_to)
    page = await asyncio.to_thread(reviews.page, session.tenant, limited, QueueCursor(), 1)
    return render_page(
        request,
        "queue_confirm.html",
        session,
        action=action,
        count=page.total,
        described=_described(where),
        snapshot=snapshot,
        filters={k: v for k, v in request.query_params.items() if k in _FILTER_NAMES},
        back=f"/console/queue?{_query(request, action=None, snapshot=None)}",
    )


_FILTER_NAMES = frozenset(_FormFilter.__dataclass_fields__)


def _snapshot(text: str) -> int:
    try:
        return decode_snapshot(text)
    except BadCursorError:
        raise InvalidParameterError("snapshot", "is not a snapshot this queue gave") from None


@router.post("/queue/decide-all", dependencies=[CSRF], response_class=HTMLResponse)
async def decide_every(
    request: Request,
    session: Reviewing,
    state: StateDep,
    ledger: LedgerDep,
    reviews: QueueDep,
    nonce: Nonce,
    form: Annotated[_FormFilter, Depends(_form_filter)],
    action: Annotated[str, Form(pattern=r"^(approve|reject)$")],
    snapshot: Annotated[str, Form(pattern=CURSOR_PATTERN)],
    expected_count: Annotated[int, Form(ge=1, le=MAX_FILTER_DECISION)],
    text: Annotated[str, Form(max_length=MAX_REASON)] = "",
) -> Response:
    """Decides every proposal the filter matched when the reviewer confirmed (up to the
    snapshot); each subject gets its own decision event. More matches than confirmed is a
    409: the reviewer confirms the new count."""
    approve = action == "approve"
    if not approve and not text.strip():
        raise InvalidParameterError("text", "a reason is required to reject")
    await screen_reason(state.require_ports().safety, text.strip() or None, "text")
    now = state.require_ports().ledger.clock.now()
    where = queue_filter(
        now,
        kind=form.kind,
        field=form.field,
        origin=Origin(form.origin) if form.origin else None,
        proposer=form.proposer,
        conversation_type=form.conversation_type,
        q=form.q,
        older_than=form.older_than,
        newer_than=form.newer_than,
        group=form.group,
    )
    limited = replace(where, up_to=_snapshot(snapshot))
    selected = await asyncio.to_thread(
        reviews.select, session.tenant, limited, limit=expected_count + 1
    )
    if len(selected) > expected_count:
        raise SelectionChangedError(
            f"expected_count: more than {expected_count} proposals match now; confirm again"
        )
    decisions = [
        Decision(UUID(s.subject_id_text), UUID(s.change_id_text), approve, text.strip() or None)
        for s in selected
    ]
    outcomes = await decide_all(state, ledger, session, decisions, nonce)
    if all(o.error_type is None for o in outcomes):
        return see_other("/console/queue", "approved" if approve else "rejected")
    return _outcomes_page(request, session, outcomes, action)
