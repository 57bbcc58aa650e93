"""Erasure of a whole subject (admins only): keys shredded, views deleted, the backend copy
dropped by the sync, saved responses deleted; the ledger keeps a receipt."""

from __future__ import annotations

import asyncio
from typing import Annotated
from uuid import UUID

import structlog
from fastapi import APIRouter
from pydantic import BaseModel, Field

from factledger.api.http.auth import Principal, Role
from factledger.api.http.deps import (
    IdempotencyDep,
    IdempotencyStoreDep,
    LedgerDep,
    SafetyDep,
    SessionBufferDep,
    SubjectIdDep,
    require_roles,
)
from factledger.api.http.routes.proposals import actor_of
from factledger.api.http.schemas.common import ERRORS, Strict
from factledger.application.ledger.commands import EraseSubject, new_command_id
from factledger.application.sessions.field_screening import screen_reason
from factledger.domain.provenance import MAX_REASON

log = structlog.get_logger(__name__)
router = APIRouter(prefix="/v1", tags=["subjects"], responses=ERRORS)  # type: ignore[arg-type]
Admin = Annotated[Principal, require_roles(Role.ADMIN)]


class EraseSubjectIn(Strict):
    """Why the subject is erased. Sealed under the subject's key like every reason, so it goes
    with the erasure itself: the receipt keeps who, when and which fields; keep the request's
    reference (a ticket) in your own records."""

    reason: str = Field(min_length=1, max_length=MAX_REASON, examples=["erasure request #4411"])


class ErasureOut(BaseModel):
    subject_id: UUID
    applied: bool = Field(description="False when this was a retry that changed nothing.")
    erased: bool = Field(description="Always true: the subject is erased.")


@router.delete(
    "/subjects/{subject}",  # noqa: FAST003 - the subject comes in through SubjectIdDep
    summary="Erase a subject and everything known about it (admin)",
    description=(
        "Records a `SubjectErased` receipt (who, when, why; no content), deletes the subject's "
        "keys, so every transcript and field it ever had is unreadable, deletes its profile "
        "views, saved responses and open sessions (their buffered messages), and queues the "
        "drop of its memory-backend namespace. Afterwards the subject answers 410 (so do its "
        "sessions, and registering its reference again) and its views 404."
    ),
)
async def erase(
    body: EraseSubjectIn,
    principal: Admin,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
    saved: IdempotencyStoreDep,
    buffer: SessionBufferDep,
    safety: SafetyDep,
) -> ErasureOut:
    await screen_reason(safety, body.reason)
    cmd = EraseSubject(
        principal.tenant,
        subject_id,
        actor_of(principal),
        body.reason,
        idem.command_id or new_command_id(),
    )

    async def run() -> ErasureOut:
        result = await asyncio.to_thread(ledger.erase_subject, cmd)
        await saved.forget_subject(principal.tenant, subject_id)
        # Its open sessions end now: their messages go, and later appends find no session
        # of an erased subject (410).
        discarded = await buffer.discard_subject(subject_id)
        log.info("subject.sessions_discarded", subject_id=str(subject_id), sessions=discarded)
        return ErasureOut(subject_id=subject_id, applied=result.applied, erased=True)

    return await idem.run(run, ErasureOut)
