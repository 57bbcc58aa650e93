"""Shapes of proposals and decisions: propose, confirm (the subject), approve or reject (staff)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, Field

from factledger.api.http.schemas.common import (
    FIELD_PATTERN,
    MAX_VERSION,
    ActorOut,
    EvidenceIn,
    EvidenceOut,
    SafeText,
    Strict,
    ValueIn,
)
from factledger.domain.proposal import MAX_CONDITION, MAX_NOTE, MAX_RATIONALE
from factledger.domain.provenance import MAX_REASON, ChangeStatus, Operation, Origin


class ProposalIn(Strict):
    """A change to one profile field. `stated` changes need evidence quoting the subject."""

    change_id: UUID | None = Field(
        default=None, description="Caller-chosen id: a retry with the same id is a no-op."
    )
    field: str = Field(pattern=FIELD_PATTERN, examples=["supplier"])
    operation: Operation = Operation.SET
    value: ValueIn | None = Field(
        default=None,
        examples=[{"type": "text", "value": "Supplier A"}],
        description="The value to set, or the items to append or remove. For `forget`: none "
        "(the whole field), or the items of the list the subject asked to forget (the others "
        "stay). For `forget_said` (field `said_lines`): a list of the subject's lines the "
        "request concerns, each `<session id>#<message index>`, said before the request its "
        "evidence quotes.",
    )
    origin: Origin = Field(examples=["stated"])
    evidence: EvidenceIn | None = None
    condition: SafeText | None = Field(
        default=None, min_length=1, max_length=MAX_CONDITION, examples=["if the pricing works"]
    )
    rationale: SafeText = Field(default="", max_length=MAX_RATIONALE)
    based_on_version: int = Field(default=0, ge=0, le=MAX_VERSION)


class ProposalOut(BaseModel):
    """A proposal and its status. Once its field is forgotten the proposal stays readable as a
    fact of the history, but its content is gone: `redacted` is true and `value`,
    `condition`, `evidence` and `rationale` are null."""

    change_id: UUID
    subject_id: UUID
    field: str
    operation: Operation
    value: dict[str, Any] | None
    origin: Origin
    condition: str | None
    status: ChangeStatus
    proposed_by: ActorOut
    proposed_at: datetime
    based_on_version: int
    evidence: EvidenceOut | None = None
    rationale: str | None = Field(default="", description="Null when `redacted`.")
    redacted: bool = Field(
        default=False,
        description="True once the field was forgotten: the content above is erased.",
    )
    superseded_by: UUID | None = Field(
        default=None, description="The newer change of the field, when this one is superseded."
    )
    agreed_by: list[ActorOut] = Field(
        default_factory=list,
        description="The product's models whose own review of the evidence session found the "
        "same field and value: they kept this change instead of proposing it again.",
    )
    relayed_by: ActorOut | None = Field(
        default=None,
        description="Who relayed the subject's words that confirmed or declined this change "
        "(the channel's principal); null while pending and for a reviewer's decision.",
    )


class ConfirmIn(Strict):
    """The subject confirmed in a conversation: where, and their exact words."""

    evidence: EvidenceIn


class ApproveIn(Strict):
    note: SafeText | None = Field(default=None, max_length=MAX_NOTE)


class RejectIn(Strict):
    reason: SafeText = Field(
        min_length=1, max_length=MAX_REASON, examples=["an inference, not stated"]
    )


class DecisionOut(BaseModel):
    change_id: UUID
    subject_id: UUID
    status: ChangeStatus
    profile_version: int
    applied: bool = Field(description="False when this was a retry that changed nothing.")
    note: str | None = Field(default=None, description="The reviewer's note on an approval.")
