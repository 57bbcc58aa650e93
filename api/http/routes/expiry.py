"""Expiry: from `valid_until` on, a memory of the memory backend is no longer served by recall
or context; the ledger records the expiry (`MemoryExpirySet`) and history keeps the memory."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import AwareDatetime, BaseModel, Field

from factledger.api.http.deps import AgentOrService, IdempotencyDep, LedgerDep, SubjectIdDep
from factledger.api.http.routes.proposals import actor_of
from factledger.api.http.schemas.common import ERRORS, Strict
from factledger.application.ledger.commands import ExpireMemory, new_command_id
from factledger.application.memory.rules import ID_PATTERN

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["forget"], responses=ERRORS)  # type: ignore[arg-type]
MemoryIdPath = Annotated[str, Path(pattern=ID_PATTERN.pattern, max_length=128)]


class ExpireIn(Strict):
    valid_until: AwareDatetime = Field(
        description="From this time on the memory is not served (with a time zone).",
        examples=["2026-06-30T00:00:00Z"],
    )


class ExpiryOut(BaseModel):
    subject_id: str
    memory_id: str
    valid_until: datetime
    applied: bool = Field(description="False when this expiry was already recorded.")


@router.post(
    "/memories/{memory_id}/expire",
    summary="Stop serving a memory from a given time on",
)
async def expire_memory(
    memory_id: MemoryIdPath,
    body: ExpireIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
) -> ExpiryOut:
    cmd = ExpireMemory(
        principal.tenant,
        subject_id,
        memory_id,
        body.valid_until,
        actor_of(principal),
        idem.command_id or new_command_id(),
    )

    async def run() -> ExpiryOut:
        result = await asyncio.to_thread(ledger.expire_memory, cmd)
        return ExpiryOut(
            subject_id=str(subject_id),
            memory_id=memory_id,
            valid_until=body.valid_until,
            applied=result.applied,
        )

    return await idem.run(run, ExpiryOut)
