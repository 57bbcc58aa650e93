"""`context` (start of a session) and `recall` (every turn). Both fail open: a slow or failing
memory backend yields a `degraded` answer within the budget, never an error.

The budget counts from the request's arrival at this process (stamped by the middleware), and
the subject check is inside it: a tenant read that cannot finish in time, or an event store
that is down, gives an empty `degraded` answer (`timeout`, `source_error`) rather than a late
one or a 503. A subject of another tenant is still a 404.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, Request

from factledger.api.http.auth import Principal
from factledger.api.http.deps import (
    AgentOrService,
    ApiState,
    StateDep,
    SubjectPath,
    api_state,
    arrival_of,
    check_tenant,
    read_tenant,
    requested_subject_id,
)
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.schemas.common import ERRORS
from factledger.api.http.schemas.recall import ContextIn, ContextOut, RecallIn, RecallOut
from factledger.api.http.subject_ahead import subject_ahead
from factledger.api.http.timing import USE_CASE, timed
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.deadline import budget_left, too_late_to_start
from factledger.application.recall.notes import render_context, render_recall
from factledger.application.recall.service import Recall
from factledger.application.recall.types import Degraded, RecallResult

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["recall"], responses=ERRORS)  # type: ignore[arg-type]


async def get_recall(state: StateDep) -> Recall:
    recall = state.require_ports().recall
    if recall is None:
        raise ServiceUnavailableError("recall is not configured")
    return recall


RecallDep = Annotated[Recall, Depends(get_recall)]


@dataclass(frozen=True, slots=True)
class BudgetedSubject:
    """The checked subject, or why it could not be checked within the budget."""

    subject_id: UUID
    unchecked: Degraded | None = None


async def check_within_budget(
    principal: Principal, ledger: Ledger, raw: str, budget_s: float, arrived_at: float
) -> BudgetedSubject:
    subject_id = await requested_subject_id(principal, ledger, raw)
    left = budget_left(budget_s, arrived_at)
    if too_late_to_start(budget_s, left):
        return BudgetedSubject(subject_id, Degraded.OVERLOADED)
    # A subject this process has met needs no read, and no task to time one.
    tenant = ledger.known_tenant(subject_id)
    try:
        if tenant is None:
            tenant = await asyncio.wait_for(read_tenant(ledger, subject_id), timeout=left)
    except TimeoutError:
        return BudgetedSubject(subject_id, Degraded.TIMEOUT)
    except StoreUnavailableError:
        return BudgetedSubject(subject_id, Degraded.SOURCE_ERROR)
    check_tenant(principal, tenant, raw)
    return BudgetedSubject(subject_id)


@dataclass(frozen=True, slots=True)
class Turn:
    """What a context request works with (a recall's is `checked_recall`), read from the
    app's state in one step: each declared dependency is a round of FastAPI's resolution on
    every request, which profiled as costly as the endpoint itself on this hot path."""

    recall: Recall
    state: ApiState
    subject: BudgetedSubject
    arrived_at: float


async def turn_of(request: Request, principal: Principal, raw: str, *, context: bool) -> Turn:
    """The recall service, the subject checked within the tenant's budget, the arrival."""
    state = api_state(request)
    ports = state.require_ports()
    recall = ports.recall
    if recall is None:
        raise ServiceUnavailableError("recall is not configured")
    arrived_at = arrival_of(request)
    budget = recall.budget_s(principal.tenant, context=context)
    subject = await check_within_budget(principal, ports.ledger, raw, budget, arrived_at)
    return Turn(recall, state, subject, arrived_at)


@router.post("/context", summary="What the agent should know at the start of a session (2 s)")
async def context(
    body: ContextIn, principal: AgentOrService, raw: SubjectPath, request: Request
) -> ContextOut:
    turn = await turn_of(request, principal, raw, context=True)
    return await answer_context(
        body, principal, turn.subject, turn.recall, turn.state, turn.arrived_at
    )


async def answer_context(
    body: ContextIn,
    principal: Principal,
    subject: BudgetedSubject,
    recall: Recall,
    state: ApiState,
    arrived_at: float,
) -> ContextOut:
    """A session's context for a checked subject (the route's and the MCP tool's)."""
    if subject.unchecked is not None:
        result = recall.unanswered_context(subject.subject_id, subject.unchecked)
    else:
        with timed(USE_CASE):
            result = await recall.session_context(
                subject.subject_id, topic=body.topic, tenant=principal.tenant, arrived_at=arrived_at
            )
    if result.degraded is not None:
        state.metrics.count_degraded("context", result.degraded.value)
    return ContextOut.of(result, render_context(result))


@router.post("/recall", summary="Memories relevant to this turn (1 s, fails open)")
async def recall_turn(
    body: RecallIn, principal: AgentOrService, raw: SubjectPath, request: Request
) -> RecallOut:
    state = api_state(request)
    recall = await get_recall(state)
    return await checked_recall(body, principal, raw, recall, state, arrival_of(request))


async def checked_recall(
    body: RecallIn,
    principal: Principal,
    raw: str,
    recall: Recall,
    state: ApiState,
    arrived_at: float,
) -> RecallOut:
    """One turn's recall of the subject `raw` names, checked within the tenant's budget (the
    route's and the MCP tool's). Where the check can only find the subject unregistered
    (`subject_ahead`), the recall runs while the check reads; the check's verdict decides."""
    ledger = state.require_ports().ledger
    budget = recall.budget_s(principal.tenant)
    ahead = subject_ahead(principal, ledger, raw)
    if ahead is None:
        subject = await check_within_budget(principal, ledger, raw, budget, arrived_at)
        return await answer_recall(body, principal, subject, recall, state, arrived_at)
    started = asyncio.create_task(_recalled(recall, ahead, body.query, principal, arrived_at))
    try:
        subject = await check_within_budget(principal, ledger, raw, budget, arrived_at)
    except BaseException:
        _drop(started)
        raise
    if subject.unchecked is None and too_late_to_start(budget, budget_left(budget, arrived_at)):
        # What a recall started after this check would have answered: shed, not late.
        subject = BudgetedSubject(subject.subject_id, Degraded.OVERLOADED)
    if subject.unchecked is not None:
        _drop(started)
        return _answered(recall.unanswered(subject.subject_id, subject.unchecked), state)
    return _answered(await started, state)


async def _recalled(
    recall: Recall, subject_id: UUID, query: str, principal: Principal, arrived_at: float
) -> RecallResult:
    # Timed as the request's use case: `Server-Timing` then shows what the request costs
    # outside `Recall.recall` (routing, auth, the subject check, serialisation).
    with timed(USE_CASE):
        return await recall.recall(
            subject_id, query, tenant=principal.tenant, arrived_at=arrived_at
        )


def _drop(started: asyncio.Task[RecallResult]) -> None:
    """A recall the check refused: cancelled, its outcome never read by anyone."""
    started.cancel()
    started.add_done_callback(_swallowed)


def _swallowed(task: asyncio.Task[RecallResult]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved


async def answer_recall(
    body: RecallIn,
    principal: Principal,
    subject: BudgetedSubject,
    recall: Recall,
    state: ApiState,
    arrived_at: float,
) -> RecallOut:
    """One turn's recall for a checked subject."""
    if subject.unchecked is not None:
        return _answered(recall.unanswered(subject.subject_id, subject.unchecked), state)
    return _answered(
        await _recalled(recall, subject.subject_id, body.query, principal, arrived_at), state
    )


def _answered(result: RecallResult, state: ApiState) -> RecallOut:
    if result.degraded is not None:
        state.metrics.count_degraded("recall", result.degraded.value)
    return RecallOut.of(result, render_recall(result))
