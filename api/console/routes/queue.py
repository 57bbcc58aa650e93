"""The review queue, one proposal with its evidence, and the decisions on them.

A decision is the API's command with the reviewer as actor (`console.actions`). A decision the
ledger refuses (the field changed meanwhile, someone decided first) is shown as such: one by
one it is the error page with the proposal's current state a click away, in bulk each item's
outcome is listed and the page answers 409.
"""

from __future__ import annotations

import asyncio
from typing import Annotated
from uuid import UUID

import structlog
from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from factledger.api.console.actions import NONCE_PATTERN, Decision, decide, decide_all
from factledger.api.console.guard import CSRF, ConsoleDep, Reviewing
from factledger.api.console.guard import subject_in_tenant as checked
from factledger.api.console.pages import render_page, see_other
from factledger.api.console.queue_view import QueueFilters, queue_choices, review_queue
from factledger.api.console.subject_view import proposal_page, queue_contexts
from factledger.api.http.deps import LedgerDep
from factledger.api.http.errors import InvalidParameterError
from factledger.api.http.routes.profile import ProfilesDep
from factledger.domain.proposal import MAX_NOTE
from factledger.domain.provenance import MAX_REASON, Origin

router = APIRouter()
log = structlog.get_logger(__name__)
Filter = Annotated[str | None, Query(max_length=200)]
Nonce = Annotated[str, Form(pattern=NONCE_PATTERN)]
MAX_BULK = 200


def _blank(value: str | None) -> str | None:
    return value or None


@router.get("/queue", response_class=HTMLResponse)
async def queue(
    request: Request,
    session: Reviewing,
    profiles: ProfilesDep,
    ledger: LedgerDep,
    kind: Filter = None,
    field: Filter = None,
    origin: Annotated[Origin | None, Query()] = None,
    proposer: Filter = None,
) -> HTMLResponse:
    filters = QueueFilters(_blank(kind), _blank(field), origin, _blank(proposer))
    items = await asyncio.to_thread(review_queue, profiles, session.tenant, filters)
    choices = await asyncio.to_thread(queue_choices, profiles, session.tenant)
    contexts = await asyncio.to_thread(queue_contexts, ledger, session.tenant, items)
    return render_page(
        request,
        "queue.html",
        session,
        items=items,
        filters=filters,
        choices=choices,
        contexts=contexts,
    )


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
    await asyncio.to_thread(decide, ledger, session, decision, nonce)
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
    await asyncio.to_thread(decide, ledger, session, decision, nonce)
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
) -> HTMLResponse:
    """Approve (note optional) or reject (reason required) every ticked proposal."""
    approve = action == "approve"
    if not approve and not text.strip():
        raise InvalidParameterError("text", "a reason is required to reject")
    decisions = _decisions(change, approve=approve, text=text.strip() or None)
    for subject_id in {d.subject_id for d in decisions}:
        await checked(console, session, subject_id)
    outcomes = await decide_all(ledger, session, decisions, nonce)
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
