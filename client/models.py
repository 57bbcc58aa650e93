"""The client's own models of the API's requests and answers (no server import).

Answers ignore unknown fields, so a newer server never breaks an older client.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

Value = dict[str, Any]
Channel = Literal["chat", "whatsapp", "voice", "email", "human", "sms"]
Role = Literal["subject", "agent", "staff", "system"]
# Which clock an `as_of` is read on: `said` (the default), when the subject said it, by all
# the ledger knows now; `known`, when the ledger recorded it (the version written by then).
Clock = Literal["said", "known"]


def text(value: str) -> Value:
    return {"type": "text", "value": value}


def number(value: str) -> Value:
    return {"type": "number", "value": value}


def money(amount: str, currency: str) -> Value:
    return {"type": "money", "amount": amount, "currency": currency}


def day(value: date) -> Value:
    return {"type": "date", "value": value.isoformat()}


def boolean(value: bool) -> Value:
    return {"type": "boolean", "value": value}


def items(*values: str) -> Value:
    return {"type": "list", "items": list(values)}


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evidence(_Request):
    """Where in a recorded session something was said: the message and the exact quote."""

    session_id: str
    message_index: int
    quote: str


class ProposalDraft(_Request):
    """A change to propose; `stated` changes need `evidence` quoting the subject."""

    field: str
    origin: Literal["stated", "inferred"]
    value: Value | None = None
    operation: Literal["set", "unset", "append", "remove", "forget", "forget_said"] = "set"
    evidence: Evidence | None = None
    condition: str | None = None
    rationale: str = ""
    based_on_version: int = 0
    change_id: UUID | None = None


class Actor(_Answer):
    kind: str
    id: str


class WhoAmI(_Answer):
    principal_id: str
    tenant: str
    role: str
    subject_id: UUID | None = None


class Subject(_Answer):
    subject_id: UUID
    kind: str
    external_ref: str
    profile_version: int
    created: bool | None = None


class Session(_Answer):
    session_id: str
    subject_id: UUID
    channel: str
    started_at: datetime
    message_count: int
    withheld: int
    conversation_type: str | None = None


class MessageOutcome(_Answer):
    kept: bool
    index: int | None
    withheld_total: int


class TranscriptMessage(_Answer):
    index: int
    role: str
    text: str
    at: datetime | None = None


class Transcript(_Answer):
    session_id: str
    messages: list[TranscriptMessage]


class EvidenceOut(_Answer):
    session_id: str
    message_index: int
    quote: str


class Proposal(_Answer):
    change_id: UUID
    subject_id: UUID
    field: str
    operation: str
    value: Value | None
    origin: str
    condition: str | None
    status: str
    proposed_by: Actor
    proposed_at: datetime
    based_on_version: int
    evidence: EvidenceOut | None = None
    rationale: str | None = ""  # null once the field was forgotten
    redacted: bool = False
    superseded_by: UUID | None = None
    # The product's models whose own review found the same value and kept this change.
    agreed_by: list[Actor] = Field(default_factory=list)
    # Who relayed the subject's words that decided it (the channel's principal).
    relayed_by: Actor | None = None


class EndedSession(_Answer):
    session_id: str
    subject_id: UUID
    message_count: int
    withheld: int
    proposals: list[Proposal]
    decided: list[Proposal] = Field(default_factory=list)  # what the subject's answers decided


class Decision(_Answer):
    change_id: UUID
    subject_id: UUID
    status: str
    profile_version: int
    applied: bool
    note: str | None = None


class LineRef(_Answer):
    session_id: str
    message_index: int


class LineNotErased(LineRef):
    """A line the forget could not make unreadable, and why (`reason` a code, `detail`
    words): sessions recorded before per-line keys keep it until the subject is erased."""

    reason: str
    detail: str = ""


class Forgotten(_Answer):
    subject_id: UUID
    applied: bool
    profile_version: int
    field: str | None = None
    memory_id: str | None = None
    # The field's pending proposals this forget rejected, and every proposal it redacted.
    rejected_changes: tuple[UUID, ...] = ()
    redacted_changes: tuple[UUID, ...] = ()
    # The lines whose words this forget made unreadable, and those it could not.
    forgotten_lines: tuple[LineRef, ...] = ()
    lines_not_erased: tuple[LineNotErased, ...] = ()


class Note(_Answer):
    text: str
    kind: str
    ref: str
    session_id: str | None = None
    inferred: bool = False
    on: date | None = None
    channel: str | None = None
    score: float | None = None
    question: str | None = None  # for a change to confirm: what the agent may ask


class Excerpt(_Answer):
    """A verbatim line, attributed (who, session, date); only for a tenant whose recall
    settings opt in (`excerpts: true`), and never part of the notes."""

    text: str
    role: str
    session_id: str
    message_index: int
    on: date | None = None
    channel: str | None = None


class RecallAnswer(_Answer):
    notes: list[Note]
    excerpts: list[Excerpt]  # empty unless the tenant opted in
    degraded: str | None
    elapsed_ms: float
    prompt: str


class SessionContext(_Answer):
    profile: list[Note]
    recent_sessions: list[Note]
    memories: list[Note]
    to_confirm: list[Note]
    excerpts: list[Excerpt]
    degraded: str | None
    degraded_lookups: list[str] = Field(default_factory=list)
    elapsed_ms: float
    prompt: str


class ProfileField(_Answer):
    value: Value | None
    display: str
    condition: str | None
    origin: str
    proposed_by: Actor
    confirmed_by: Actor
    confirmed_at: datetime
    evidence: EvidenceOut | None
    change_id: UUID
    version: int
    forgotten: bool
    relayed_by: Actor | None = None  # who relayed the subject's confirming words
    said_at: datetime | None = None  # when the words it rests on were said
    known_at: datetime | None = None  # when the ledger recorded the decision


class Profile(_Answer):
    subject_id: UUID
    version: int
    at: datetime
    cause: str
    fields: dict[str, ProfileField]
    said_at: datetime | None = None
    known_at: datetime | None = None
    clock: Clock | None = None  # the clock an `as_of` answer was read on


class HistoryEntry(_Answer):
    field: str
    kind: str
    at: datetime
    version: int
    until: datetime | None = None
    until_version: int | None = None
    value: Value | None = None
    display: str | None = None
    condition: str | None = None
    origin: str | None = None
    reason: str | None = None
    forgotten: bool = False
    note: str | None = None
    confirmed_by: Actor | None = None
    # The subject's confirming words and who relayed them (none for a reviewer's approval).
    confirmation: EvidenceOut | None = None
    relayed_by: Actor | None = None
    said_at: datetime | None = None
    known_at: datetime | None = None


class History(_Answer):
    subject_id: UUID
    field: str | None
    entries: list[HistoryEntry]


class FieldDiff(_Answer):
    field: str
    before: ProfileField | None
    after: ProfileField | None


class Diff(_Answer):
    """Between two versions, or two times on one clock (the other pair is None)."""

    subject_id: UUID
    from_version: int | None
    to_version: int | None
    changes: list[FieldDiff]
    from_as_of: datetime | None = None
    to_as_of: datetime | None = None
    clock: Clock | None = None


class PendingChange(_Answer):
    subject_id: UUID
    change_id: UUID
    field: str
    operation: str
    value: Value | None
    condition: str | None
    origin: str
    proposed_by: Actor
    proposed_at: datetime
    rationale: str = ""
    based_on_version: int = 0


class QueuedChange(PendingChange):
    """A pending change with what the queue knows of its subject and its conversation."""

    subject_kind: str = ""
    subject_ref: str = ""
    said_at: datetime | None = None  # when the subject said it (null without evidence)
    conversation_type: str | None = None
    group: str = ""  # identical proposals of other subjects share it


class PendingList(_Answer):
    """A page of the review queue: `total` counts every match; pass `next_cursor` (or
    `previous_cursor`) back as `cursor`."""

    items: list[QueuedChange]
    total: int = 0
    next_cursor: str | None = None
    previous_cursor: str | None = None
    snapshot: str | None = None


class PendingGroup(_Answer):
    group: str
    count: int
    subjects: int
    sample: QueuedChange


class PendingGroups(_Answer):
    groups: list[PendingGroup]
    total: int
    next_offset: int | None
    snapshot: str | None = None


class PickOutcome(_Answer):
    subject_id: UUID
    change_id: UUID
    applied: bool
    error_type: str | None = None
    detail: str | None = None


class Decisions(_Answer):
    decided: int
    refused: int
    outcomes: list[PickOutcome]


class Event(_Answer):
    version: int
    topic: str
    timestamp: datetime
    payload: dict[str, Any]


class EventPage(_Answer):
    subject_id: UUID
    events: list[Event]
    next_after: int | None


class DeadLetter(_Answer):
    item_id: str
    position: int
    subject_id: UUID
    kind: str
    targets: list[str]
    attempts: int
    error_type: str


class DeadLetters(_Answer):
    items: list[DeadLetter]
    next_after: str | None = None


class Retried(_Answer):
    retried: int
