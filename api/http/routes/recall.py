"""`context` (start of a session) and `recall` (every turn). Both fail open: a slow or failing
memory backend yields a `degraded` answer within the budget, never an error."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from factledger.api.http.deps import AgentOrService, StateDep, SubjectIdDep
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.schemas.common import ERRORS
from factledger.api.http.schemas.recall import ContextIn, ContextOut, RecallIn, RecallOut
from factledger.application.recall.notes import render_context, render_recall
from factledger.application.recall.service import Recall

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["recall"], responses=ERRORS)  # type: ignore[arg-type]


def get_recall(state: StateDep) -> Recall:
    recall = state.require_ports().recall
    if recall is None:
        raise ServiceUnavailableError("recall is not configured")
    return recall


RecallDep = Annotated[Recall, Depends(get_recall)]


@router.post("/context", summary="What the agent should know at the start of a session (2 s)")
async def context(
    body: ContextIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    recall: RecallDep,
    state: StateDep,
) -> ContextOut:
    result = await recall.session_context(subject_id, topic=body.topic, tenant=principal.tenant)
    if result.degraded is not None:
        state.metrics.count_degraded("context", result.degraded.value)
    return ContextOut.of(result, render_context(result))


@router.post("/recall", summary="Memories relevant to this turn (1 s, fails open)")
async def recall_turn(
    body: RecallIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    recall: RecallDep,
    state: StateDep,
) -> RecallOut:
    result = await recall.recall(subject_id, body.query, tenant=principal.tenant)
    if result.degraded is not None:
        state.metrics.count_degraded("recall", result.degraded.value)
    return RecallOut.of(result, render_recall(result))
