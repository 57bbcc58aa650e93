"""The subject aggregate: one person, customer, lead or case, and everything known about them.

Public methods check the rules and trigger events; only the events' `apply` changes state, so a
replay rebuilds the same subject. Times are passed in (`at`), never read from a clock.
"""

from __future__ import annotations

import contextlib
import copy
from datetime import datetime
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from factledger.domain.errors import (
    ChangeAlreadyProposedError,
    ChangeNotFoundError,
    ChangeNotPendingError,
    ConfirmationNotFromSubjectError,
    EvidenceNotFoundError,
    FieldNotHeldError,
    FieldNotPresentError,
    InvalidOperationError,
    InvalidReferenceError,
    StaleChangeError,
    SubjectErasedError,
    TimeWentBackwardsError,
)
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    ChangeSuperseded,
    FactForgotten,
    FieldExpirySet,
    MemoryExpirySet,
    SessionRecorded,
    SessionReviewed,
    SubjectErased,
    SubjectRegistered,
)
from factledger.domain.forgets import ForgetMark
from factledger.domain.proposal import (
    ChangeRecord,
    CurrentField,
    Decision,
    Proposal,
    check_confirmation,
    check_evidence,
    check_operation,
    check_rejection,
    check_subject_words,
    evidence_refs,
)
from factledger.domain.provenance import (
    MAX_QUOTE,
    Actor,
    ActorKind,
    ChangeStatus,
    Evidence,
    Operation,
    check_reason,
)
from factledger.domain.sessions import SessionInfo, SessionRecord, check_session
from factledger.domain.text import check_text, is_safe_text
from factledger.domain.transcript import Message, Role, Verdict
from factledger.domain.values import ProfileSchema

SUBJECT_NAMESPACE = uuid5(NAMESPACE_URL, "factledger:subject")
MAX_REFERENCE = 200  # each of tenant, kind and external reference
SEEN_COMMANDS_WINDOW = 500  # enough to absorb client retries; older ids are long settled


def subject_id_for(tenant: str, kind: str, external_ref: str) -> UUID:
    """The deterministic id of a subject: a retried registration targets the same stream."""
    for part in (tenant, kind, external_ref):
        if not part.strip() or len(part) > MAX_REFERENCE or "/" in part or not is_safe_text(part):
            raise InvalidReferenceError(
                f"tenant, kind and external reference: 1..{MAX_REFERENCE} chars, no '/',"
                " no NUL or unpaired surrogate"
            )
    return uuid5(SUBJECT_NAMESPACE, f"{tenant}/{kind}/{external_ref}")


class Subject(Aggregate):
    """The event-sourced subject. Its events are the only source of truth."""

    TOPIC = "factledger.subject"
    Created = SubjectRegistered  # the library looks the creation event up by this name
    SessionRecorded = SessionRecorded
    ChangeProposed = ChangeProposed
    ChangeConfirmed = ChangeConfirmed
    ChangeRejected = ChangeRejected
    FactForgotten = FactForgotten
    SubjectErased = SubjectErased
    MemoryExpirySet = MemoryExpirySet
    ChangeSuperseded = ChangeSuperseded
    SessionReviewed = SessionReviewed
    FieldExpirySet = FieldExpirySet

    def __init__(self, tenant: str, kind: str, external_ref: str) -> None:
        self.tenant, self.kind, self.external_ref = tenant, kind, external_ref
        self.sessions: dict[str, SessionInfo] = {}
        self.changes: dict[UUID, ChangeRecord] = {}
        self.fields: dict[str, CurrentField] = {}
        self.field_changed_in: dict[str, int] = {}  # field -> profile version of its last change
        self.forgotten_memories: set[str] = set()
        self.memory_expiries: dict[str, datetime] = {}  # memory id -> valid until
        # change id -> where the subject confirmed it (session id, message index)
        self.confirmed_in: dict[UUID, tuple[str, int]] = {}
        self.erased = False
        self.forgotten_fields: set[str] = set()  # ever forgotten (keys must be gone)
        self.forget_marks: dict[str, ForgetMark] = {}  # field -> its latest forget (recall)
        self.profile_version = 0
        self.seen_commands: list[str] = []
        self.superseded_by: dict[UUID, UUID] = {}  # superseded change id -> the newer one
        self.reviewed: set[str] = set()  # sessions a model reviewed for proposals

    @classmethod
    def register(cls, tenant: str, kind: str, external_ref: str, *, at: datetime) -> Subject:
        subject_id = subject_id_for(tenant, kind, external_ref)
        return cls._create(
            cls.Created,
            id=subject_id,
            tenant=tenant,
            kind=kind,
            external_ref=external_ref,
            timestamp=at,
        )

    def __deepcopy__(self, memo: dict[int, object]) -> Subject:
        """The library copies a cached subject for every command. Everything it holds is an
        immutable value except the change records, so copy the containers and those only."""
        clone = object.__new__(type(self))
        for name, value in self.__dict__.items():
            if isinstance(value, dict | set | list):
                value = value.copy()
            clone.__dict__[name] = value
        # A record's fields are immutable values: a shallow copy keeps every field, new ones too.
        clone.changes = {cid: copy.copy(r) for cid, r in self.changes.items()}
        return clone

    # -- queries on state -------------------------------------------------------------------

    def has_seen(self, command_id: str) -> bool:
        return command_id in self.seen_commands

    def has_reviewed(self, session_id: str) -> bool:
        """A session is reviewed once, by whichever model came first: a later model (a new
        extractor version) reviews the sessions recorded from then on, never old ones again."""
        return session_id in self.reviewed

    def change(self, change_id: UUID) -> ChangeRecord:
        record = self.changes.get(change_id)
        if record is None:
            raise ChangeNotFoundError(f"change {change_id} on subject {self.id}")
        return record

    # -- commands ----------------------------------------------------------------------------

    def record_session(self, session: SessionRecord, *, at: datetime) -> bool:
        """Records one interaction; returns False when the same session was already recorded."""
        self._check_live()
        if not check_session(session, self.sessions.get(session.session_id)):
            return False
        self._check_time(at)
        self.trigger_event(
            self.SessionRecorded,
            timestamp=at,
            interaction_number=len(self.sessions) + 1,
            **session.to_event_fields(),
        )
        for index, message in enumerate(session.transcript):
            if message.decides is not None:
                self._decide_in(session.session_id, index, message, at=at)
        return True

    def _decide_in(self, session_id: str, index: int, message: Message, *, at: datetime) -> None:
        """The subject confirms or declines a change in a message of the session just recorded,
        with that message as evidence. A change decided meanwhile (or overtaken, or gone) is
        left as it is: the words stay in the transcript, and recording never fails on them."""
        decision = message.decides
        if decision is None or not message.text.strip():
            return
        if message.role is not Role.SUBJECT:
            raise ConfirmationNotFromSubjectError(
                f"session {session_id} message {index}: only the subject's message decides"
            )
        record = self.changes.get(decision.change_id)
        if record is None or record.status is not ChangeStatus.PENDING:
            return
        said = Evidence(session_id, index, message.text[:MAX_QUOTE])
        by = Decision(Actor(ActorKind.SUBJECT, self.external_ref), evidence=said)
        with contextlib.suppress(StaleChangeError, FieldNotPresentError):
            if decision.verdict is Verdict.CONFIRMS:
                self.confirm(decision.change_id, by, at=at)
            else:
                reason = f"declined by the subject (session {session_id}, message {index})"
                self.reject(decision.change_id, by=by, reason=reason, at=at)

    def propose(self, proposal: Proposal, schema: ProfileSchema, *, at: datetime) -> bool:
        """Proposes a change; returns False when this change id was already proposed alike."""
        self._check_live()
        existing = self.changes.get(proposal.change_id)
        if existing is not None:
            if existing.fingerprint != proposal.fingerprint():
                raise ChangeAlreadyProposedError(f"change {proposal.change_id}")
            return False
        proposal.check_new()
        schema.check(proposal.field, proposal.value)
        check_operation(proposal, self.fields.get(proposal.field))
        if proposal.based_on_version > self.profile_version:
            raise InvalidOperationError("based_on_version: ahead of the subject's profile")
        if proposal.based_on_version < self.field_changed_in.get(proposal.field, 0):
            raise StaleChangeError(f"field {proposal.field} changed after the proposal's version")
        check_evidence(
            proposal.evidence, proposal.origin, self.sessions, condition=proposal.condition
        )
        self._check_time(at)
        self.trigger_event(self.ChangeProposed, timestamp=at, **proposal.to_event_fields())
        return True

    def confirm(self, change_id: UUID, confirmation: Decision, *, at: datetime) -> None:
        """Confirms a pending change (by the subject, with evidence, or by staff)."""
        self._check_live()
        record = self.change(change_id)
        check_confirmation(record, confirmation, self.sessions)
        if record.based_on_version < self.field_changed_in.get(record.field, 0):
            raise StaleChangeError(f"field {record.field} changed since change {change_id}")
        if record.operation is Operation.UNSET and record.field not in self.fields:
            raise FieldNotPresentError(f"field {record.field} on subject {self.id}")
        self._check_time(at)
        self.trigger_event(
            self.ChangeConfirmed,
            timestamp=at,
            change_id=change_id,
            field=record.field,
            confirmed_by=confirmation.by.to_payload(),
            evidence=None if confirmation.evidence is None else confirmation.evidence.to_payload(),
            profile_version=self.profile_version + 1,
            command_id=confirmation.command_id,
            note=confirmation.note,
            said_at=None
            if confirmation.evidence is None
            else self.sessions[confirmation.evidence.session_id].said_at(
                confirmation.evidence.message_index
            ),
        )

    def supersede(self, change_id: UUID, *, by: UUID, at: datetime) -> None:
        """A newer pending change of the same field replaces a pending one (both stay in the
        record; only the newer one waits for a decision)."""
        self._check_live()
        older, newer = self.change(change_id), self.change(by)
        for record in (older, newer):
            if record.status is not ChangeStatus.PENDING:
                raise ChangeNotPendingError(f"change {record.change_id} is {record.status.value}")
        if older.field != newer.field or change_id == by:
            raise InvalidOperationError("supersede: needs another change of the same field")
        self._check_time(at)
        self.trigger_event(
            self.ChangeSuperseded, timestamp=at, change_id=change_id, superseded_by=by
        )

    def mark_reviewed(
        self,
        session_id: str,
        *,
        by: Actor,
        proposed: list[UUID],
        superseded: list[UUID],
        at: datetime,
    ) -> None:
        """Records that a model reviewed a session and what it proposed from it."""
        self._check_live()
        if by.kind is not ActorKind.MODEL:
            raise InvalidOperationError("only a model reviews sessions for proposals")
        if session_id not in self.sessions:
            raise EvidenceNotFoundError(f"session {session_id}: not recorded")
        if self.has_reviewed(session_id):
            return
        self._check_time(at)
        self.trigger_event(
            self.SessionReviewed,
            timestamp=at,
            session_id=session_id,
            reviewed_by=by.to_payload(),
            change_ids=[str(c) for c in proposed],
            superseded=[str(c) for c in superseded],
        )

    def reject(self, change_id: UUID, *, by: Decision, reason: str, at: datetime) -> None:
        self._check_live()
        check_reason(reason)
        record = self.change(change_id)
        check_rejection(record, by)
        if by.evidence is not None:  # a subject declining in a conversation: words that mean it
            check_subject_words(record, by.evidence, self.sessions)
        self._check_time(at)
        self.trigger_event(
            self.ChangeRejected,
            timestamp=at,
            change_id=change_id,
            rejected_by=by.by.to_payload(),
            reason=reason,
            command_id=by.command_id,
        )

    def forget_field(self, field: str, *, by: Decision, reason: str, at: datetime) -> None:
        """Forgets a field: the next version lacks it; its pending changes are withdrawn."""
        self._check_live()
        check_reason(reason)
        if field not in self.fields:
            raise FieldNotPresentError(f"field {field} on subject {self.id}")
        self._check_time(at)
        withdrawn = [
            str(c.change_id)
            for c in self.changes.values()
            if c.field == field and c.status is ChangeStatus.PENDING
        ]
        self.trigger_event(
            self.FactForgotten,
            timestamp=at,
            field=field,
            memory_id=None,
            requested_by=by.by.to_payload(),
            reason=reason,
            profile_version=self.profile_version + 1,
            withdrawn_changes=withdrawn,
            command_id=by.command_id,
            evidence_refs=evidence_refs(self.changes.values(), self.confirmed_in, field),
        )

    def forget_memory(self, memory_id: str, *, by: Decision, reason: str, at: datetime) -> None:
        """Records that a backend memory must be forgotten (the sync worker acts on it)."""
        self._check_live()
        check_reason(reason)
        check_text(memory_id, "memory_id")
        if memory_id in self.forgotten_memories:
            return
        self._check_time(at)
        self.trigger_event(
            self.FactForgotten,
            timestamp=at,
            field=None,
            memory_id=memory_id,
            requested_by=by.by.to_payload(),
            reason=reason,
            profile_version=None,
            withdrawn_changes=[],
            command_id=by.command_id,
            evidence_refs=[],
        )

    def expire_memory(
        self, memory_id: str, valid_until: datetime, *, by: Decision, at: datetime
    ) -> None:
        """Records until when a backend memory is valid (the sync sets it in the backend);
        setting the same time again records nothing."""
        self._check_live()
        if valid_until.tzinfo is None:
            raise InvalidOperationError("valid_until: needs a time zone")
        if self.memory_expiries.get(memory_id) == valid_until:
            return
        self._check_time(at)
        self.trigger_event(
            self.MemoryExpirySet,
            timestamp=at,
            memory_id=memory_id,
            valid_until=valid_until,
            requested_by=by.by.to_payload(),
            command_id=by.command_id,
        )

    def expire_field(
        self,
        field: str,
        valid_until: datetime,
        *,
        by: Decision,
        at: datetime,
        reason: str | None = None,
    ) -> None:
        """Records until when a field of the current profile is served; setting the same time
        again records nothing. A time in the past stops serving it at once."""
        self._check_live()
        if valid_until.tzinfo is None:
            raise InvalidOperationError("valid_until: needs a time zone")
        if reason is not None:
            check_reason(reason)
        current = self.fields.get(field)
        if current is None:
            raise FieldNotHeldError(f"field {field} on subject {self.id}")
        if current.valid_until == valid_until:
            return
        self._check_time(at)
        self.trigger_event(
            self.FieldExpirySet,
            timestamp=at,
            field=field,
            valid_until=valid_until,
            requested_by=by.by.to_payload(),
            reason=reason,
            command_id=by.command_id,
        )

    # -- helpers -----------------------------------------------------------------------------

    def erase(self, *, by: Decision, reason: str, at: datetime) -> None:
        """Erases the subject: its keys go (transcripts and every field) and it takes no
        more commands; the stream keeps only its structure."""
        check_reason(reason)
        self._check_time(at)
        self.trigger_event(
            self.SubjectErased,
            timestamp=at,
            requested_by=by.by.to_payload(),
            reason=reason,
            fields=sorted({c.field for c in self.changes.values()}),
            command_id=by.command_id,
        )

    def _check_live(self) -> None:
        if self.erased:
            raise SubjectErasedError(f"subject {self.id}")

    def _check_time(self, at: datetime) -> None:
        self._check_live()
        if at < self.modified_on:
            raise TimeWentBackwardsError(f"subject {self.id}: event dated before the last one")

    def remember_command(self, command_id: str | None) -> None:
        """Called by event mutators: keeps a bounded window of applied command ids."""
        if command_id is not None:
            self.seen_commands = [*self.seen_commands, command_id][-SEEN_COMMANDS_WINDOW:]
