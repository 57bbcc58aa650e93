"""`context` (start of a session) and `recall` (every turn). Both fail open: a slow or failing
memory backend yields a `degraded` answer within the budget, never an error.

The budget counts from the request's arrival at this process (stamped by the middleware), and
the subject check is inside it: a tenant read that cannot finish in time, or an event store
that is down, gives an empty `degraded` answer (`timeout`, `source_error`) rather than a late
one or a 503. A subject of another tenant is still a 404.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends

from factledger.api.http.auth import Principal
from factledger.api.http.deps import (
    AgentOrService,
    ArrivalDep,
    LedgerDep,
    StateDep,
    SubjectPath,
    check_tenant,
    read_tenant,
    requested_subject_id,
)
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.schemas.common import ERRORS
from factledger.api.http.schemas.recall import ContextIn, ContextOut, RecallIn, RecallOut
from factledger.api.http.timing import USE_CASE, timed
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.deadline import budget_left, too_late_to_start
from factledger.application.recall.notes import render_context, render_recall
from factledger.application.recall.service import Recall
from factledger.application.recall.types import Degraded

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
    subject_id = requested_subject_id(principal, raw)
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


def budgeted_subject(*, context: bool) -> Callable[..., Awaitable[BudgetedSubject]]:
    """The subject check of a recall (`context=False`) or a session's context, within the
    tenant's budget for it."""

    async def check(
        principal: AgentOrService,
        ledger: LedgerDep,
        raw: SubjectPath,
        recall: RecallDep,
        arrived_at: ArrivalDep,
    ) -> BudgetedSubject:
        budget = recall.budget_s(principal.tenant, context=context)
        return await check_within_budget(principal, ledger, raw, budget, arrived_at)

    return check


@router.post("/context", summary="What the agent should know at the start of a session (2 s)")
async def context(
    body: ContextIn,
    principal: AgentOrService,
    subject: Annotated[BudgetedSubject, Depends(budgeted_subject(context=True))],
    recall: RecallDep,
    state: StateDep,
    arrived_at: ArrivalDep,
) -> ContextOut:
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
    body: RecallIn,
    principal: AgentOrService,
    subject: Annotated[BudgetedSubject, Depends(budgeted_subject(context=False))],
    recall: RecallDep,
    state: StateDep,
    arrived_at: ArrivalDep,
) -> RecallOut:
    if subject.unchecked is not None:
        result = recall.unanswered(subject.subject_id, subject.unchecked)
    else:
        # Timed as the request's use case: `Server-Timing` then shows what the request
        # costs outside `Recall.recall` (routing, auth, the subject check, serialisation).
        with timed(USE_CASE):
            result = await recall.recall(
                subject.subject_id, body.query, tenant=principal.tenant, arrived_at=arrived_at
            )
    if result.degraded is not None:
        state.metrics.count_degraded("recall", result.degraded.value)
    return RecallOut.of(result, render_recall(result))
