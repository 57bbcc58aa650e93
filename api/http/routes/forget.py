"""Forget: a profile field (the next version lacks it) or one memory of the memory backend."""

from __future__ import annotations

import asyncio
from typing import Literal
from uuid import UUID

import structlog
from fastapi import APIRouter
from pydantic import BaseModel, Field, model_validator

from factledger.api.http.deps import (
    AgentOrService,
    BackendDep,
    IdempotencyDep,
    IdempotencyStoreDep,
    LedgerDep,
    SafetyDep,
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
from factledger.application.memory.drawn_from import memory_drawn_from
from factledger.application.memory.rules import ID_PATTERN
from factledger.application.sessions.field_screening import screen_reason
from factledger.domain.provenance import MAX_REASON, ChangeStatus
from factledger.domain.values import MAX_ITEMS

log = structlog.get_logger(__name__)

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["forget"], responses=ERRORS)  # type: ignore[arg-type]


class ForgetIn(Strict):
    """Exactly one of `field` or `memory_id`."""

    field: str | None = Field(default=None, pattern=FIELD_PATTERN, examples=["purchase_intent"])
    memory_id: str | None = Field(default=None, pattern=ID_PATTERN.pattern)
    reason: SafeText = Field(min_length=1, max_length=MAX_REASON, examples=["the subject asked"])
    items: list[SafeText] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ITEMS,
        description="With `field`: only these items of its list are forgotten; the next version "
        "keeps the others (the field's words go as for a whole-field forget).",
        examples=[["Vatly"]],
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> ForgetIn:
        if self.items is not None and self.field is None:
            raise body_rule("items", "needs `field`: the list field to forget items of")
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


class LineRef(BaseModel):
    session_id: str
    message_index: int


NOT_ERASED_WHY = (
    "stored before each transcript line had a key of its own: the session's transcript is "
    "one ciphertext under the subject's key, which a forget rotates (sealing the rest again "
    "line by line); this line is still readable because that rotation did not finish (the "
    "next pass over recorded forgets finishes it) or the line was stored in clear. Erasing "
    "the subject takes it"
)


class LineNotErased(BaseModel):
    session_id: str
    message_index: int
    reason: Literal["sealed_with_whole_transcript"] = "sealed_with_whole_transcript"
    detail: str = NOT_ERASED_WHY


class ForgetOut(BaseModel):
    subject_id: str
    applied: bool = Field(description="False when this was a retry that changed nothing.")
    profile_version: int
    field: str | None = Field(default=None, description="The forgotten field, if one was.")
    memory_id: str | None = Field(default=None, description="The forgotten memory, if one was.")
    rejected_changes: list[str] = Field(
        default_factory=list,
        description=(
            "The pending proposals this forget rejected (status `forgotten`): the field's, or, "
            "for a memory, those quoting a line it was drawn from."
        ),
    )
    redacted_changes: list[str] = Field(
        default_factory=list,
        description=(
            "Every proposal whose value, condition, rationale and quote are now unreadable: "
            "the rejected ones above, and, for a field, those already decided (confirmed, "
            "rejected or replaced) since the field was last forgotten."
        ),
    )
    forgotten_lines: list[LineRef] = Field(
        default_factory=list,
        description=(
            "The transcript lines whose words this forget made unreadable everywhere (the "
            "field's evidence and the lines that asked about or decided its changes; for a "
            "memory, the lines it was drawn from, when the backend names them). Readers see "
            "that such a line was said, never what it said."
        ),
    )
    lines_not_erased: list[LineNotErased] = Field(
        default_factory=list,
        description=(
            "Lines this forget should have taken but could not yet. A session recorded before "
            "each line had a key of its own keeps its whole transcript under the subject's "
            "key: the forget rotates that key (its other words are sealed again, line by "
            "line) and deletes the old one, so such lines are listed here only while that "
            "rotation is unfinished, or when stored in clear. Empty for every session "
            "recorded since per-line keys."
        ),
    )


def _forget_out(
    result: CommandResult,
    field: str | None,
    memory_id: str | None,
    lines: list[tuple[str, int]],
    not_erased: list[tuple[str, int]],
) -> ForgetOut:
    subject = result.subject
    taken: tuple[UUID, ...] = ()
    if subject is not None and field is not None:
        taken = subject.forgot_changes.get(field, ())
    elif subject is not None and memory_id is not None:
        taken = subject.memory_withdrew.get(memory_id, ())

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
        forgotten_lines=[
            LineRef(session_id=s, message_index=i) for s, i in lines if (s, i) not in not_erased
        ],
        lines_not_erased=[LineNotErased(session_id=s, message_index=i) for s, i in not_erased],
    )


@router.post("/forget", summary="Forget a profile field or a memory")
async def forget(
    body: ForgetIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
    saved: IdempotencyStoreDep,
    backend: BackendDep,
    safety: SafetyDep,
) -> ForgetOut:
    await screen_reason(safety, body.reason)
    command_id = idem.command_id or new_command_id()
    by = actor_of(principal)

    tenant, reason = principal.tenant, body.reason

    async def run() -> ForgetOut:
        if body.field is not None:
            items = tuple(body.items or ())
            cmd_f = ForgetField(tenant, subject_id, body.field, by, reason, command_id, items)
            result = await asyncio.to_thread(ledger.forget_field, cmd_f)
        else:
            memory_id = body.memory_id or ""
            sessions = await asyncio.to_thread(ledger.subject, tenant, subject_id)
            drawn = await memory_drawn_from(backend, subject_id, memory_id, sessions.sessions)
            cmd_m = ForgetMemory(
                tenant,
                subject_id,
                memory_id,
                by,
                reason,
                command_id,
                evidence_refs=drawn.lines,
                memory_text=drawn.text,
            )
            result = await asyncio.to_thread(ledger.forget_memory, cmd_m)
        # Saved responses are plain copies of what the deleted keys encrypted.
        await saved.forget_subject(tenant, subject_id)
        lines = await asyncio.to_thread(
            ledger.forgotten_lines, subject_id, field=body.field, memory_id=body.memory_id
        )
        not_erased = await asyncio.to_thread(ledger.lines_not_erased, subject_id, lines)
        if not_erased:
            log.warning(
                "forget.lines_not_erased", subject_id=str(subject_id), lines=len(not_erased)
            )
        return _forget_out(result, body.field, body.memory_id, lines, not_erased)

    return await idem.run(run, ForgetOut)
