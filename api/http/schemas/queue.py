"""Shapes of the review queue at volume: a page with its exact count and cursors, the groups of
identical proposals, and one decision on many changes."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Self
from uuid import UUID

from pydantic import BaseModel, Field, model_validator

from factledger.api.http.schemas.common import SafeText, Strict, body_rule
from factledger.api.http.schemas.profile import PendingOut
from factledger.application.review_queue.cursor import AGE_PATTERN, CURSOR_PATTERN
from factledger.application.review_queue.decisions import MAX_FILTER_DECISION
from factledger.application.review_queue.queue import MAX_PAGE, MAX_TEXT, QueueEntry, QueueGroup
from factledger.domain.proposal import MAX_NOTE
from factledger.domain.provenance import MAX_REASON, Origin

FILTER_TEXT = 200
PROPOSER_PATTERN = r"^((subject|staff|agent|model|system):.{1,200})?$"  # blank: any
GROUP_PATTERN = r"^([0-9a-f]{24})?$"


class QueuedOut(PendingOut):
    """A pending proposal with what the queue knows of its subject and conversation."""

    subject_kind: str
    subject_ref: str
    said_at: datetime | None = Field(
        description="When the subject said it: the start of the evidence's conversation "
        "(null without evidence). `proposed_at` is when the ledger recorded the proposal."
    )
    conversation_type: str | None
    group: str = Field(description="Identical proposals of other subjects share it.")

    @classmethod
    def of_entry(cls, e: QueueEntry) -> QueuedOut:
        base = PendingOut.of(e.change).model_dump()
        return cls(
            **base,
            subject_kind=e.kind,
            subject_ref=e.external_ref,
            said_at=e.said_at,
            conversation_type=e.conversation_type,
            group=e.group_key,
        )


class QueuePageOut(BaseModel):
    items: list[QueuedOut]
    total: int = Field(description="Every pending proposal the filters match (exact).")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")
    previous_cursor: str | None = Field(description="Pass as `cursor` for the page before.")
    snapshot: str | None = Field(
        description="Pass as `snapshot` to a decision on every match: it then never reaches "
        "proposals recorded after this page was read."
    )


class GroupOut(BaseModel):
    group: str
    count: int = Field(description="Pending proposals in the group (exact).")
    subjects: int
    sample: QueuedOut = Field(description="The group's oldest proposal.")


class GroupPageOut(BaseModel):
    groups: list[GroupOut]
    total: int = Field(description="Groups the filters match.")
    next_offset: int | None
    snapshot: str | None = Field(
        description="As the queue page's: pass it to a decision on a group."
    )

    @staticmethod
    def group_out(g: QueueGroup) -> GroupOut:
        return GroupOut(
            group=g.key, count=g.count, subjects=g.subjects, sample=QueuedOut.of_entry(g.sample)
        )


class QueueFilterIn(Strict):
    """The same filters as the queue's query parameters."""

    kind: SafeText | None = Field(default=None, max_length=FILTER_TEXT)
    field: SafeText | None = Field(default=None, max_length=FILTER_TEXT)
    origin: Origin | None = None
    proposer: SafeText | None = Field(default=None, pattern=PROPOSER_PATTERN)
    conversation_type: SafeText | None = Field(default=None, max_length=FILTER_TEXT)
    q: SafeText | None = Field(default=None, max_length=MAX_TEXT)
    older_than: str | None = Field(default=None, pattern=AGE_PATTERN)
    newer_than: str | None = Field(default=None, pattern=AGE_PATTERN)
    group: str | None = Field(default=None, pattern=GROUP_PATTERN)
    subject_id: UUID | None = None


class PickIn(Strict):
    subject_id: UUID
    change_id: UUID


class DecideManyIn(Strict):
    """Exactly one of `changes` (the ticked rows of a page) or `filter` (every change it
    matches, up to `snapshot`, which must be `expected_count` at most: more means proposals
    arrived that the reviewer did not see)."""

    decision: Literal["approve", "reject"]
    note: SafeText | None = Field(default=None, max_length=MAX_NOTE)
    reason: SafeText | None = Field(default=None, max_length=MAX_REASON)
    changes: list[PickIn] | None = Field(default=None, min_length=1, max_length=MAX_PAGE)
    filter: QueueFilterIn | None = None
    snapshot: str | None = Field(default=None, pattern=CURSOR_PATTERN)
    expected_count: int | None = Field(default=None, ge=1, le=MAX_FILTER_DECISION)

    @model_validator(mode="after")
    def _one_selection(self) -> Self:
        if (self.changes is None) == (self.filter is None):
            raise body_rule("changes", "send either `changes` or `filter`, not both")
        if self.filter is not None and (self.expected_count is None or self.snapshot is None):
            raise body_rule(
                "expected_count", "a decision on a filter needs `expected_count` and `snapshot`"
            )
        if self.decision == "reject" and not (self.reason or "").strip():
            raise body_rule("reason", "a rejection needs a reason")
        if self.decision == "approve" and self.reason is not None:
            raise body_rule("reason", "an approval takes a `note`, not a `reason`")
        return self


class PickOutcomeOut(BaseModel):
    subject_id: UUID
    change_id: UUID
    applied: bool
    error_type: str | None = None
    detail: str | None = None


class DecisionsOut(BaseModel):
    decided: int = Field(description="Changes this request decided.")
    refused: int = Field(description="Changes the ledger refused (see each outcome).")
    outcomes: list[PickOutcomeOut]
