"""Forget: a profile field (the next version lacks it) or one memory of the memory backend."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from pydantic import BaseModel, Field, model_validator

from factledger.api.http.deps import (
    AgentOrService,
    IdempotencyDep,
    IdempotencyStoreDep,
    LedgerDep,
    SubjectIdDep,
)
from factledger.api.http.routes.proposals import actor_of
from factledger.api.http.schemas.common import (
    ERRORS,
    FIELD_PATTERN,
    SafeText,
    Strict,
    body_rule,
)
from factledger.application.ledger.commands import (
    CommandResult,
    ForgetField,
    ForgetMemory,
    new_command_id,
)
from factledger.application.memory.rules import ID_PATTERN
from factledger.domain.provenance import MAX_REASON, ChangeStatus

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["forget"], responses=ERRORS)  # type: ignore[arg-type]


class ForgetIn(Strict):
    """Exactly one of `field` or `memory_id`."""

    field: str | None = Field(default=None, pattern=FIELD_PATTERN, examples=["purchase_intent"])
    memory_id: str | None = Field(default=None, pattern=ID_PATTERN.pattern)
    reason: SafeText = Field(min_length=1, max_length=MAX_REASON, examples=["the subject asked"])

    @model_validator(mode="after")
    def _exactly_one(self) -> ForgetIn:
        if self.field is not None and self.memory_id is not None:
            raise body_rule(
                "memory_id",
                "send `field` to forget a profile field or `memory_id` to forget one memory, "
                "not both (two forgets for both)",
            )
        if self.field is None and self.memory_id is None:
            raise body_rule(
                "field",
                "is required: send `field` to forget a profile field, or `memory_id` to "
                "forget one memory",
            )
        return self


class ForgetOut(BaseModel):
    subject_id: str
    applied: bool = Field(description="False when this was a retry that changed nothing.")
    profile_version: int
    field: str | None = Field(default=None, description="The forgotten field, if one was.")
    memory_id: str | None = Field(default=None, description="The forgotten memory, if one was.")
    rejected_changes: list[str] = Field(
        default_factory=list,
        description="The field's pending proposals this forget rejected (status `forgotten`).",
    )
    redacted_changes: list[str] = Field(
        default_factory=list,
        description=(
            "Every proposal of the field whose value, condition, rationale and quote are now "
            "unreadable: the rejected ones above, and those already decided (confirmed, "
            "rejected or replaced) since the field was last forgotten."
        ),
    )


def _forget_out(result: CommandResult, field: str | None, memory_id: str | None) -> ForgetOut:
    subject = result.subject
    taken = subject.forgot_changes.get(field, ()) if subject and field else ()
    withdrawn = [
        c for c in taken if subject and subject.changes[c].status is ChangeStatus.FORGOTTEN
    ]
    return ForgetOut(
        subject_id=str(result.subject_id),
        applied=result.applied,
        profile_version=result.profile_version,
        field=field,
        memory_id=memory_id,
        rejected_changes=[str(c) for c in withdrawn],
        redacted_changes=[str(c) for c in taken],
    )


@router.post("/forget", summary="Forget a profile field or a memory")
async def forget(
    body: ForgetIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
    saved: IdempotencyStoreDep,
) -> ForgetOut:
    command_id = idem.command_id or new_command_id()
    by = actor_of(principal)

    tenant, reason = principal.tenant, body.reason

    async def run() -> ForgetOut:
        if body.field is not None:
            cmd_f = ForgetField(tenant, subject_id, body.field, by, reason, command_id)
            result = await asyncio.to_thread(ledger.forget_field, cmd_f)
        else:
            memory_id = body.memory_id or ""
            cmd_m = ForgetMemory(tenant, subject_id, memory_id, by, reason, command_id)
            result = await asyncio.to_thread(ledger.forget_memory, cmd_m)
        # Saved responses are plain copies of what the deleted keys encrypted.
        await saved.forget_subject(tenant, subject_id)
        return _forget_out(result, body.field, body.memory_id)

    return await idem.run(run, ForgetOut)
