"""The subject aggregate: one person, customer, lead or case, and everything known about them.

Public methods check the rules and trigger events; only the events' `apply` changes state, so a
replay rebuilds the same subject. Times are passed in (`at`), never read from a clock. The
state and its shared checks are in `state`, forgetting and expiry in `forgetting`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from factledger.domain.errors import (
    ChangeAlreadyProposedError,
    ChangeNotPendingError,
    ConfirmationNotFromSubjectError,
    EvidenceNotFoundError,
    FieldNotPresentError,
    InvalidOperationError,
    StaleChangeError,
)
from factledger.domain.hedges import TentativeReader
from factledger.domain.proposal import (
    Decision,
    Proposal,
    check_confirmation,
    check_evidence,
    check_items_held,
    check_operation,
    check_rejection,
    check_said_lines,
    check_subject_words,
    kept_items,
)
from factledger.domain.provenance import (
    MAX_QUOTE,
    REQUESTS_TO_FORGET,
    Actor,
    ActorKind,
    ChangeStatus,
    Evidence,
    Operation,
    check_reason,
)
from factledger.domain.sessions import FingerprintKey, SessionRecord, check_session
from factledger.domain.subject.forgetting import SubjectForgetting
from factledger.domain.subject.ids import check_reference
from factledger.domain.transcript import Message, Role, Verdict
from factledger.domain.values import ListValue, ProfileSchema


class Subject(SubjectForgetting):
    """The event-sourced subject. Its events are the only source of truth."""

    TOPIC = "factledger.subject"

    @classmethod
    def register(
        cls,
        tenant: str,
        kind: str,
        external_ref: str,
        *,
        at: datetime,
        subject_id: UUID,
    ) -> Subject:
        """A new subject under the id the ledger derived for its reference (`keyed_subject_id`,
        or `legacy_subject_id` for subjects registered before keyed ids)."""
        check_reference(tenant, kind, external_ref)
        return cls._create(
            cls.Created,
            id=subject_id,
            tenant=tenant,
            kind=kind,
            external_ref=external_ref,
            timestamp=at,
        )

    # -- commands ----------------------------------------------------------------------------

    def record_session(
        self, session: SessionRecord, *, at: datetime, fingerprint_key: FingerprintKey
    ) -> bool:
        """Records one interaction; returns False when the same session was already recorded.
        `fingerprint_key` keys the session's fingerprint: the ledger passes the subject's;
        `BEFORE_KEYS`, named explicitly, stands for a ledger from before keyed fingerprints
        (tests and lab fixtures), so no caller gets an unkeyed one by leaving it out."""
        self._check_live()
        existing = self.sessions.get(session.session_id)
        if not check_session(session, existing, fingerprint_key):
            return False
        self._check_time(at)
        self.trigger_event(
            self.SessionRecorded,
            timestamp=at,
            interaction_number=len(self.sessions) + 1,
            **session.to_event_fields(fingerprint_key),
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
        if decision is None or not decision.decides or not message.text.strip():
            return
        if message.role is not Role.SUBJECT:
            raise ConfirmationNotFromSubjectError(
                f"session {session_id} message {index}: only the subject's message decides"
            )
        record = self.changes.get(decision.change_id)
        if record is None or record.status is not ChangeStatus.PENDING:
            return
        said = Evidence(session_id, index, message.text[:MAX_QUOTE])
        by = Decision(
            Actor(ActorKind.SUBJECT, str(self.id)),
            evidence=said,
            relayed_by=message.relayed_by,
        )
        with contextlib.suppress(StaleChangeError, FieldNotPresentError):
            if decision.verdict is Verdict.CONFIRMS:
                self.confirm(decision.change_id, by, at=at)
            else:
                reason = f"declined by the subject (session {session_id}, message {index})"
                self.reject(decision.change_id, by=by, reason=reason, at=at)

    def propose(
        self,
        proposal: Proposal,
        schema: ProfileSchema,
        *,
        at: datetime,
        tentative: TentativeReader | None = None,
    ) -> bool:
        """Proposes a change; returns False when this change id was already proposed alike.
        With `tentative`, a stated change quoting a tentative sentence must carry a condition
        (`domain.hedges`)."""
        self._check_live()
        existing = self.changes.get(proposal.change_id)
        if existing is not None:
            if existing.fingerprint != proposal.fingerprint():
                raise ChangeAlreadyProposedError(f"change {proposal.change_id}")
            return False
        proposal.check_new()
        if proposal.operation is Operation.FORGET_SAID:
            check_said_lines(proposal, self.sessions)  # its field is no kind's (ADR 0174)
        else:
            schema.check(proposal.field, proposal.value)
        check_operation(proposal, self.fields.get(proposal.field))
        if proposal.operation is Operation.FORGET and not self.holds_words_of(proposal.field):
            raise FieldNotPresentError(f"field {proposal.field} on subject {self.id}")
        if proposal.operation is Operation.FORGET and isinstance(proposal.value, ListValue):
            held = self.held_items(proposal.field)
            check_items_held(proposal.field, proposal.value.items, held, "forget: value")
        if proposal.based_on_version > self.profile_version:
            raise InvalidOperationError("based_on_version: ahead of the subject's profile")
        if proposal.based_on_version < self.field_changed_in.get(proposal.field, 0):
            raise StaleChangeError(f"field {proposal.field} changed after the proposal's version")
        check_evidence(
            proposal.evidence,
            proposal.origin,
            self.sessions,
            condition=proposal.condition,
            states_value=proposal.operation not in REQUESTS_TO_FORGET,
            tentative=tentative,
        )
        self._check_time(at)
        evidence = proposal.evidence
        said_at = (
            None
            if evidence is None
            else self.sessions[evidence.session_id].said_at(evidence.message_index)
        )
        self.trigger_event(
            self.ChangeProposed, timestamp=at, said_at=said_at, **proposal.to_event_fields()
        )
        return True

    def confirm(self, change_id: UUID, confirmation: Decision, *, at: datetime) -> None:
        """Confirms a pending change (by the subject, with evidence, or by staff)."""
        self._check_live()
        record = self.change(change_id)
        check_confirmation(record, confirmation, self.sessions)
        if record.operation is Operation.FORGET_SAID:
            self.forget_said(change_id, by=confirmation, at=at)
            return
        if record.operation is Operation.FORGET:
            # Approving a request to forget is forgetting the field, by whoever decided; a
            # request naming some items of a list keeps the others (ADR 0160).
            items = record.proposal.value
            self.forget_field(
                record.field,
                by=confirmation,
                reason=f"forget request {change_id} approved",
                at=at,
                request=change_id,
                kept=kept_items(
                    held.value if (held := self.fields.get(record.field)) else None, items
                )
                if isinstance(items, ListValue)
                else (),
            )
            return
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
            relayed_by=None
            if confirmation.relayed_by is None
            else confirmation.relayed_by.to_payload(),
            key_generation=self.key_generation(record.field),
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
        agreed: Sequence[UUID] = (),
    ) -> None:
        """Records that a model reviewed a session, what it proposed from it and the callers'
        pending changes it agreed with (see `SessionReviewed`)."""
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
            agreed=[str(c) for c in agreed],
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
            relayed_by=None if by.relayed_by is None else by.relayed_by.to_payload(),
        )
