"""Expiry: from `valid_until` on, a memory of the memory backend or a field of the profile is
no longer served by recall or context; the ledger records the expiry (`MemoryExpirySet`,
`FieldExpirySet`) and history keeps the memory or field."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import AwareDatetime, BaseModel, Field

from factledger.api.http.deps import AgentOrService, IdempotencyDep, LedgerDep, SubjectIdDep
from factledger.api.http.routes.proposals import actor_of
from factledger.api.http.schemas.common import ERRORS, FIELD_PATTERN, Strict
from factledger.application.ledger.commands import (
    CommandResult,
    ExpireField,
    ExpireMemory,
    new_command_id,
)
from factledger.application.memory.rules import ID_PATTERN
from factledger.domain.provenance import MAX_REASON

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["forget"], responses=ERRORS)  # type: ignore[arg-type]
MemoryIdPath = Annotated[str, Path(pattern=ID_PATTERN.pattern, max_length=128)]
FieldPath = Annotated[str, Path(pattern=FIELD_PATTERN, examples=["purchase_intent"])]


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

    def out(result: CommandResult) -> ExpiryOut:
        return ExpiryOut(
            subject_id=str(subject_id),
            memory_id=memory_id,
            valid_until=body.valid_until,
            applied=result.applied,
        )

    async def run() -> ExpiryOut:
        return out(await asyncio.to_thread(ledger.expire_memory, cmd))

    return await idem.run(run, ExpiryOut, render=lambda _, result: out(result))


class ExpireFieldIn(Strict):
    valid_until: AwareDatetime = Field(
        description="From this time on the field is not served (with a time zone).",
        examples=["2026-06-30T00:00:00Z"],
    )
    reason: str | None = Field(default=None, min_length=1, max_length=MAX_REASON)


class FieldExpiryOut(BaseModel):
    subject_id: str
    field: str
    valid_until: datetime
    applied: bool = Field(description="False when this expiry was already recorded.")


@router.post(
    "/profile/fields/{field}/expire",
    summary="Stop serving a profile field from a given time on",
    description="The field stays in the profile (shown `expired`) and its history; a later "
    "confirmed change of the field clears the expiry. A field the profile does not hold is "
    "a 404 `FieldNotHeldError`.",
)
async def expire_field(
    field: FieldPath,
    body: ExpireFieldIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
) -> FieldExpiryOut:
    cmd = ExpireField(
        principal.tenant,
        subject_id,
        field,
        body.valid_until,
        actor_of(principal),
        body.reason,
        idem.command_id or new_command_id(),
    )

    def out(result: CommandResult) -> FieldExpiryOut:
        return FieldExpiryOut(
            subject_id=str(subject_id),
            field=field,
            valid_until=body.valid_until,
            applied=result.applied,
        )

    async def run() -> FieldExpiryOut:
        return out(await asyncio.to_thread(ledger.expire_field, cmd))

    return await idem.run(run, FieldExpiryOut, render=lambda _, result: out(result))
