"""Commands of the subject ledger: frozen dataclasses, one per use case.

Every command that changes a subject carries the tenant (a subject is only visible inside its
own tenant) and a `command_id`; a command delivered twice is applied once. Building a command
twice gives two ids, so a caller that retries must retry the same command object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as default
from datetime import datetime
from uuid import UUID, uuid4

from factledger.application.proposals.candidates import Candidate
from factledger.application.proposals.forget_requests import ForgetRequestCandidate
from factledger.domain.provenance import Actor, Evidence, Operation, Origin
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message
from factledger.domain.values import FieldValue, JsonValue


def new_command_id() -> str:
    return str(uuid4())


@dataclass(frozen=True, slots=True)
class RegisterSubject:
    """Registers a subject; registering the same (tenant, kind, reference) again is a no-op."""

    tenant: str
    kind: str  # lead, customer, supplier, case...
    external_ref: str
    # A returning person: when the reference's subject was erased, register a new subject
    # (a new generation) instead of refusing. Never revives or links to the erased one.
    returning: bool = False


@dataclass(frozen=True, slots=True)
class RecordSession:
    """Records one finished interaction; the caller's `session_id` makes a retry a no-op."""

    tenant: str
    subject_id: UUID
    session_id: str
    channel: Channel
    started_at: datetime
    ended_at: datetime | None
    transcript: tuple[Message, ...]
    summary: Mapping[str, JsonValue] | None = None
    withheld_count: int = 0
    conversation_type: str | None = None


@dataclass(frozen=True, slots=True)
class ProposeChange:
    """Proposes a change to one profile field; it stays pending until someone decides."""

    tenant: str
    subject_id: UUID
    field: str
    operation: Operation
    value: FieldValue | None
    origin: Origin
    proposed_by: Actor
    based_on_version: int
    evidence: Evidence | None = None
    condition: str | None = None
    rationale: str = ""
    change_id: UUID = default(default_factory=uuid4)
    command_id: str = default(default_factory=new_command_id)


@dataclass(frozen=True, slots=True)
class ConfirmChange:
    """The subject confirms a pending change in a conversation: the evidence is required."""

    tenant: str
    subject_id: UUID
    change_id: UUID
    evidence: Evidence
    command_id: str = default(default_factory=new_command_id)
    # Who relayed the subject's words (the channel's principal), recorded beside them.
    relayed_by: Actor | None = None


@dataclass(frozen=True, slots=True)
class ApproveChange:
    """An authorised reviewer (staff) approves a pending change."""

    tenant: str
    subject_id: UUID
    change_id: UUID
    reviewer_id: str
    command_id: str = default(default_factory=new_command_id)
    note: str | None = None


@dataclass(frozen=True, slots=True)
class RejectChange:
    """The subject or a reviewer rejects a pending change; it never reaches the profile."""

    tenant: str
    subject_id: UUID
    change_id: UUID
    rejected_by: Actor
    reason: str
    command_id: str = default(default_factory=new_command_id)


@dataclass(frozen=True, slots=True)
class ForgetField:
    """Forgets a profile field: the next version lacks it; history keeps only that it was.
    With `items`, only those items of its list: the next version keeps the others (ADR 0160)."""

    tenant: str
    subject_id: UUID
    field: str
    requested_by: Actor
    reason: str
    command_id: str = default(default_factory=new_command_id)
    items: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ForgetMemory:
    """Asks for one memory of the memory backend to be forgotten (the sync worker acts on it)."""

    tenant: str
    subject_id: UUID
    memory_id: str
    requested_by: Actor
    reason: str
    command_id: str = default(default_factory=new_command_id)
    # The transcript lines the memory was drawn from, as the backend knows them (session id,
    # message index): their words are forgotten with it.
    evidence_refs: tuple[tuple[str, int], ...] = ()
    # The memory's own text, as the backend holds it: the forget's reason must not say it
    # again. Never recorded.
    memory_text: str | None = None


@dataclass(frozen=True, slots=True)
class ExpireMemory:
    """Sets until when one memory of the memory backend is served (the sync worker acts on it)."""

    tenant: str
    subject_id: UUID
    memory_id: str
    valid_until: datetime
    requested_by: Actor
    command_id: str = default(default_factory=new_command_id)


@dataclass(frozen=True, slots=True)
class ExpireField:
    """Sets until when one field of the current profile is served by recall and context."""

    tenant: str
    subject_id: UUID
    field: str
    valid_until: datetime
    requested_by: Actor
    reason: str | None = None
    command_id: str = default(default_factory=new_command_id)


@dataclass(frozen=True, slots=True)
class EraseSubject:
    """Erases a subject: every transcript and field becomes unreadable; no more commands."""

    tenant: str
    subject_id: UUID
    requested_by: Actor
    reason: str
    command_id: str = default(default_factory=new_command_id)


@dataclass(frozen=True, slots=True)
class ReviewSession:
    """A model's review of one recorded session: the changes it would propose, weighed
    against the subject when saved. Reviewing the same session with the same model again
    is a no-op."""

    tenant: str
    subject_id: UUID
    session_id: str
    model: Actor
    candidates: tuple[Candidate, ...]
    # Requests to forget said in the session, placed on their fields.
    forget_requests: tuple[ForgetRequestCandidate, ...] = ()


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did.

    - `applied` is False for a retry or duplicate that changed nothing.
    - `position` is the notification id of the last event written (None when nothing was):
      catch the projections up to it (`Follower.catch_up`) for read-your-writes.
    - `subject` is the subject as the command left it, the caller's own copy: an answer is
      rendered from it without loading the subject again.
    - `forgot` is True when the command recorded a forget (asked directly, or a request to
      forget approved by a decision or by the subject's words): copies of the subject's words
      kept outside the ledger (saved responses) must go too.
    """

    subject_id: UUID
    applied: bool
    position: int | None
    subject_version: int
    profile_version: int
    subject: Subject | None = default(default=None, compare=False, repr=False)
    forgot: bool = False
