"""The subject's events: stored names are public schemas, so every class pins its `TOPIC`.

A payload change gets a new topic version (`.v2`) and an upcaster; never edit a stored shape.
Payloads hold JSON-safe values only (the transcoder turns tuples into lists on the way back).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, cast
from uuid import UUID

from eventsourcing.domain import Aggregate

from factledger.domain.forget_mark import ForgetMark
from factledger.domain.proposal import (
    ChangeRecord,
    CurrentField,
    Proposal,
    apply_operation,
    kept_field,
)
from factledger.domain.provenance import Actor, ChangeStatus, Evidence, Operation, Origin
from factledger.domain.said_lines import SAID_LINES
from factledger.domain.sessions import SessionInfo, transcript_from_payload
from factledger.domain.transcript import Channel
from factledger.domain.values import JsonObject, JsonValue, from_payload

if TYPE_CHECKING:
    from factledger.domain.subject import Subject


def proposal_from_event(event: ChangeProposed) -> Proposal:
    return Proposal(
        change_id=event.change_id,
        field=event.field,
        operation=Operation(event.operation),
        value=None if event.value is None else from_payload(event.value),
        origin=Origin(event.origin),
        proposed_by=Actor.from_payload(event.proposed_by),
        based_on_version=event.based_on_version,
        evidence=None if event.evidence is None else Evidence.from_payload(event.evidence),
        condition=event.condition,
        rationale=event.rationale,
        command_id=event.command_id,
    )


def relay_of(payload: JsonObject | None) -> Actor | None:
    return None if payload is None else Actor.from_payload(payload)


class SubjectRegistered(Aggregate.Created):
    """A subject registered under (tenant, kind, external reference).

    The reference identifies the person, so it is sealed under the subject's key and shredded
    with it: read back after an erasure it is None. Readers of the log meet that registration
    before the erasure that follows it, and treat it as that subject's erasure already (the
    review queue leaves the subject out, the profile reader answers not found).
    """

    TOPIC = "factledger.subject.registered.v1"
    tenant: str
    kind: str
    external_ref: str | None


class SessionRecorded(Aggregate.Event):
    """One interaction recorded verbatim.

    Class version 2 adds `conversation_type` (which extraction guidance applies);
    the topic is unchanged and the library upcasts stored version 1 events (no class_version
    in their state) with `upcast_v1_v2`, to None: no conversation type, the default guidance.
    """

    TOPIC = "factledger.subject.session_recorded.v1"
    class_version = 2
    session_id: str
    channel: str
    started_at: datetime
    ended_at: datetime | None
    interaction_number: int
    transcript: list[JsonValue]
    summary: JsonObject | None
    withheld_count: int
    conversation_type: str | None  # a slug, stored in clear (it says what kind of talk, not what)
    fingerprint: str

    @staticmethod
    def upcast_v1_v2(state: dict[str, object]) -> None:
        state["conversation_type"] = None

    def apply(self, aggregate: Subject) -> None:
        # None once the subject's key is deleted (erased): the session keeps no messages.
        messages = transcript_from_payload(self.transcript or [])
        aggregate.sessions[self.session_id] = SessionInfo(
            session_id=self.session_id,
            channel=Channel(self.channel),
            started_at=self.started_at,
            interaction_number=self.interaction_number,
            fingerprint=self.fingerprint,
            messages=tuple((m.role, m.text) for m in messages),
            recorded_version=self.originator_version,
            message_times=tuple(m.at for m in messages),
            conversation_type=self.conversation_type,
            message_changes=tuple(
                None if m.decides is None else str(m.decides.change_id) for m in messages
            ),
        )


class ChangeProposed(Aggregate.Event):
    """A change proposed for a field, pending a decision.

    Class version 2 adds `said_at`; the topic is unchanged and the library upcasts stored
    version 1 events (no class_version in their state) with `upcast_v1_v2`, to None: readers
    then fall back to the evidence session's start, else to the proposal's own time.
    """

    TOPIC = "factledger.subject.change_proposed.v1"
    class_version = 2
    change_id: UUID
    field: str
    operation: str
    value: JsonObject | None
    condition: str | None
    origin: str
    evidence: JsonObject | None
    rationale: str | None  # None once the field's key is deleted
    proposed_by: JsonObject
    based_on_version: int
    command_id: str | None
    # When the evidence was said (its message's conversation time, else its session's
    # start); None without evidence. A time, so stored in clear.
    said_at: datetime | None

    @staticmethod
    def upcast_v1_v2(state: dict[str, object]) -> None:
        state["said_at"] = None

    def apply(self, aggregate: Subject) -> None:
        proposal = proposal_from_event(self)
        aggregate.changes[self.change_id] = ChangeRecord(
            proposal=proposal, proposed_at=self.timestamp, proposed_version=self.originator_version
        )
        aggregate.remember_command(self.command_id)


class ChangeConfirmed(Aggregate.Event):
    """A pending change confirmed by the subject or approved by staff.

    Class version 2 adds `note`, version 3 `said_at`, version 4 `relayed_by`, version 5
    `key_generation` (as on `ChangeProposed`); the topic is unchanged and the library upcasts
    stored events with `upcast_v1_v2`, then `upcast_v2_v3`, `upcast_v3_v4`, `upcast_v4_v5`.
    """

    TOPIC = "factledger.subject.change_confirmed.v1"
    class_version = 5
    change_id: UUID
    field: str  # the change's field (it names the key that encrypts `evidence` and `note`)
    confirmed_by: JsonObject
    evidence: JsonObject | None  # the subject's confirming words; None for a staff approval
    profile_version: int
    command_id: str | None
    note: str | None  # the reviewer's note on an approval; it may speak of the person
    # When the subject said the confirming words (the conversation's time, not the API's);
    # None for a staff approval, dated by the event itself. A time, so stored in clear.
    said_at: datetime | None
    # The principal that relayed the subject's words (kind and id): the channel's service,
    # a channel principal. None for a staff approval, and for confirmations recorded before
    # relays were. Who acts for a tenant, not what the person said: stored in clear.
    relayed_by: JsonObject | None
    # The generation of the field's key that seals `evidence` and `note`: the field's forgets
    # so far (`Subject.key_generation`). A forget names the generation it shreds, and nothing
    # recorded after it is sealed under that generation. A number, so stored in clear.
    key_generation: int

    @staticmethod
    def upcast_v1_v2(state: dict[str, object]) -> None:
        state["note"] = None

    @staticmethod
    def upcast_v2_v3(state: dict[str, object]) -> None:
        state["said_at"] = None

    @staticmethod
    def upcast_v3_v4(state: dict[str, object]) -> None:
        state["relayed_by"] = None

    @staticmethod
    def upcast_v4_v5(state: dict[str, object]) -> None:
        state["key_generation"] = 0

    @property
    def dated(self) -> datetime:
        """When the version it creates took effect: the conversation's time for a subject's
        confirmation, the decision's for a staff approval."""
        return self.timestamp if self.said_at is None else self.said_at

    def apply(self, aggregate: Subject) -> None:
        record = aggregate.changes[self.change_id]
        aggregate.changes[self.change_id] = replace(
            record,
            status=ChangeStatus.CONFIRMED,
            note=self.note,
            confirmed_version=self.profile_version,
            decided_by=Actor.from_payload(self.confirmed_by),
            relayed_by=relay_of(self.relayed_by),
        )
        proposal = record.proposal
        current = aggregate.fields.get(proposal.field)
        value = apply_operation(
            None if current is None else current.value, proposal.operation, proposal.value
        )
        if value is None:
            aggregate.fields.pop(proposal.field, None)
        else:
            aggregate.fields[proposal.field] = CurrentField(
                value=value,
                condition=proposal.condition,
                origin=proposal.origin,
                change_id=proposal.change_id,
                since_version=self.profile_version,
                proposed_by=proposal.proposed_by,
                confirmed_by=Actor.from_payload(self.confirmed_by),
                confirmed_at=self.dated,
                evidence_session=None
                if proposal.evidence is None
                else proposal.evidence.session_id,
                relayed_by=relay_of(self.relayed_by),
            )
        aggregate.field_changed_in[proposal.field] = self.profile_version
        aggregate.profile_version = self.profile_version
        if self.evidence is not None:  # None for a staff approval, or once the key is gone
            said = Evidence.from_payload(self.evidence)
            aggregate.confirmed_in[self.change_id] = (said.session_id, said.message_index)
        aggregate.remember_command(self.command_id)


class ChangeRejected(Aggregate.Event):
    """A pending change declined by the subject or rejected by staff.

    Class version 2 adds `relayed_by`; the topic is unchanged and the library upcasts stored
    version 1 events (no class_version in their state) with `upcast_v1_v2`, to None.
    """

    TOPIC = "factledger.subject.change_rejected.v1"
    class_version = 2
    change_id: UUID
    rejected_by: JsonObject
    reason: str
    command_id: str | None
    # Who relayed the subject's decline (kind and id); None for a reviewer's rejection.
    relayed_by: JsonObject | None

    @staticmethod
    def upcast_v1_v2(state: dict[str, object]) -> None:
        state["relayed_by"] = None

    def apply(self, aggregate: Subject) -> None:
        record = aggregate.changes[self.change_id]
        aggregate.changes[self.change_id] = replace(
            record,
            status=ChangeStatus.REJECTED,
            decided_by=Actor.from_payload(self.rejected_by),
            relayed_by=relay_of(self.relayed_by),
        )
        aggregate.remember_command(self.command_id)


class FactForgotten(Aggregate.Event):
    """A field (or one backend memory) forgotten.

    Class version 2 adds `evidence_refs`, version 3 `request_id` and `relayed_by`, version 4
    `key_generation`, version 5 `kept`; the topic is unchanged and the library upcasts stored
    events with `upcast_v1_v2`, then `upcast_v2_v3`, `upcast_v3_v4`, `upcast_v4_v5`.
    """

    TOPIC = "factledger.subject.fact_forgotten.v1"
    class_version = 5
    # A profile field; None when a backend memory is forgotten, or the lines a request to
    # forget what was said names (no memory id, `request_id` set: ADR 0174).
    field: str | None
    memory_id: str | None
    requested_by: JsonObject
    reason: str
    profile_version: int | None  # the version without the field; None for a memory id
    withdrawn_changes: list[str]  # pending changes of the field, withdrawn with it
    command_id: str | None
    # Where the field's words were said, in clear (ids only), read before its key is deleted:
    # [{"session_id": ..., "message_index": ...}], so the sync can forget the backend
    # memories drawn from them. Empty for a memory id, and for events stored before v2.
    evidence_refs: list[JsonObject]
    # The pending request to forget the field (a change with operation `forget`), or the
    # lines (`forget_said`), that this forget approves; None for a forget asked directly.
    # Ids only, in clear.
    request_id: str | None
    # Who relayed the subject's words approving that request (kind and id); None otherwise.
    relayed_by: JsonObject | None
    # The generation of the field's key this forget shreds, with every earlier one; the
    # field's words from then on are sealed under the next. None for a memory id, and for
    # forgets recorded before generations (they shred the field's one scope, generation 0).
    key_generation: int | None
    # For a memory id: the pending changes quoting one of its lines, withdrawn with it (ids,
    # in clear); their words go with their own keys.
    # The items of a list field that stay when a request named only some of them (ADR 0160):
    # the next version holds them, standing as the field stood. None when the whole field
    # goes. The subject's words, so sealed, under the field key's next generation: the
    # field's next forget takes them. `kept_standing` is what they stand on (ids, actors,
    # times: in clear; `domain.proposal.standing_of`), carried here because the changes that
    # set the value read back without their words once this forget has run.
    kept: list[str] | None
    kept_standing: JsonObject | None

    @staticmethod
    def upcast_v1_v2(state: dict[str, object]) -> None:
        state["evidence_refs"] = []

    @staticmethod
    def upcast_v2_v3(state: dict[str, object]) -> None:
        state["request_id"] = None
        state["relayed_by"] = None

    @staticmethod
    def upcast_v3_v4(state: dict[str, object]) -> None:
        state["key_generation"] = None

    @staticmethod
    def upcast_v4_v5(state: dict[str, object]) -> None:
        state["kept"] = None
        state["kept_standing"] = None

    def apply(self, aggregate: Subject) -> None:
        if self.field is not None and self.profile_version is not None:
            aggregate.forgot_changes[self.field] = tuple(aggregate.unforgotten_changes(self.field))
            aggregate.fields.pop(self.field, None)
            if self.kept and self.kept_standing is not None:
                aggregate.fields[self.field] = kept_field(
                    self.kept, self.kept_standing, self.profile_version
                )
            aggregate.forgotten_fields.add(self.field)
            aggregate.key_generations[self.field] = (self.key_generation or 0) + 1
            earlier = aggregate.forget_marks.get(self.field)
            aggregate.forget_marks[self.field] = ForgetMark(
                self.originator_version,
                _lines_of(self.evidence_refs) | (earlier.evidence if earlier else frozenset()),
            )
            aggregate.field_changed_in[self.field] = self.profile_version
            aggregate.profile_version = self.profile_version
        elif self.memory_id is None and self.request_id is not None:
            # What was said on some lines, forgotten at the subject's request (ADR 0174):
            # recall withholds what was drawn from them, as from a forgotten field's words.
            earlier = aggregate.forget_marks.get(SAID_LINES)
            aggregate.forget_marks[SAID_LINES] = ForgetMark(
                self.originator_version,
                _lines_of(self.evidence_refs) | (earlier.evidence if earlier else frozenset()),
            )
        if self.request_id is not None:
            request = UUID(self.request_id)
            aggregate.changes[request] = replace(
                aggregate.changes[request],
                status=ChangeStatus.CONFIRMED,
                decided_by=Actor.from_payload(self.requested_by),
                relayed_by=relay_of(self.relayed_by),
            )
        for change_id in self.withdrawn_changes:
            aggregate.set_status(UUID(change_id), ChangeStatus.FORGOTTEN)
        if self.memory_id is not None:
            aggregate.forgotten_memories.add(self.memory_id)
            if self.withdrawn_changes:
                aggregate.memory_withdrew[self.memory_id] = tuple(
                    UUID(c) for c in self.withdrawn_changes
                )
        aggregate.remember_command(self.command_id)


def _lines_of(refs: list[JsonObject]) -> frozenset[tuple[str, int]]:
    return frozenset(
        (session, index)
        for ref in refs
        if isinstance(session := ref.get("session_id"), str)
        and isinstance(index := ref.get("message_index"), int)
    )


class ChangeSuperseded(Aggregate.Event):
    """A pending change replaced by a newer pending change of the same field (the subject said
    something newer), so the review queue never holds two contradicting changes of a field."""

    TOPIC = "factledger.subject.change_superseded.v1"
    change_id: UUID
    superseded_by: UUID  # the newer change, proposed in the same save

    def apply(self, aggregate: Subject) -> None:
        aggregate.set_status(self.change_id, ChangeStatus.SUPERSEDED)
        aggregate.superseded_by[self.change_id] = self.superseded_by


class SessionReviewed(Aggregate.Event):
    """A model read a recorded session for changes to propose; `change_ids` are the ones it
    proposed (possibly none). A session is reviewed once, so a rerun proposes nothing twice,
    whatever changed since.

    Class version 2 adds `agreed`: the callers' pending changes from this session that the
    model would have proposed itself (same field, same value by meaning), kept as they are
    instead of being proposed again. The topic is unchanged; stored version 1 events are
    upcast with `upcast_v1_v2` to none.
    """

    TOPIC = "factledger.subject.session_reviewed.v1"
    class_version = 2
    session_id: str
    reviewed_by: JsonObject  # the model's actor
    change_ids: list[str]
    superseded: list[str]
    agreed: list[str]

    @staticmethod
    def upcast_v1_v2(state: dict[str, object]) -> None:
        state["agreed"] = []

    def apply(self, aggregate: Subject) -> None:
        aggregate.reviewed.add(self.session_id)
        model = Actor.from_payload(self.reviewed_by)
        for change_id in self.agreed:
            key = UUID(change_id)
            aggregate.agreed_by[key] = (*aggregate.agreed_by.get(key, ()), model)


class SubjectErased(Aggregate.Event):
    TOPIC = "factledger.subject.erased.v1"
    requested_by: JsonObject
    reason: str
    fields: list[str]  # every field ever proposed: their keys are deleted with the subject's
    command_id: str | None

    def apply(self, aggregate: Subject) -> None:
        aggregate.erased = True
        aggregate.fields.clear()
        aggregate.forgotten_fields.update(self.fields)
        pending = [c for c, r in aggregate.changes.items() if r.status is ChangeStatus.PENDING]
        for change_id in pending:
            aggregate.set_status(change_id, ChangeStatus.FORGOTTEN)
        aggregate.remember_command(self.command_id)


class MemoryExpirySet(Aggregate.Event):
    """A backend memory stops being served from `valid_until` on (the sync sets it in the
    backend); the memory and this event stay, so history shows what was valid when."""

    TOPIC = "factledger.subject.memory_expiry_set.v1"
    memory_id: str
    valid_until: datetime
    requested_by: JsonObject
    command_id: str | None

    def apply(self, aggregate: Subject) -> None:
        aggregate.memory_expiries[self.memory_id] = self.valid_until
        aggregate.remember_command(self.command_id)


class FieldExpirySet(Aggregate.Event):
    """A field of the current profile stops being served from `valid_until` on (by the clock
    of whoever reads it: no event is needed at that time); the field, its value and this
    event stay, so history shows what was valid when. A later confirmed change of the field
    replaces it and, with it, the expiry."""

    TOPIC = "factledger.subject.field_expiry_set.v1"
    field: str
    valid_until: datetime
    requested_by: JsonObject
    reason: str | None  # like a forget's reason: why, in a few words, stored in clear
    command_id: str | None

    def apply(self, aggregate: Subject) -> None:
        current = aggregate.fields.get(self.field)
        if current is not None:
            aggregate.fields[self.field] = replace(current, valid_until=self.valid_until)
        aggregate.remember_command(self.command_id)


class SubjectKeyRotated(Aggregate.Event):
    """The subject's key was retired after what it sealed was sealed again: sessions stored
    with their transcript as one ciphertext under it, line by line with the forgotten lines
    left out, and its other fields (reference, fingerprints, reasons) under its next key.

    `resealed` holds `{"version", "field", "value"}` entries, each value ciphertext (or a
    session's lines, each sealed or marked forgotten, or None: a summary dropped), ids and
    numbers in clear; readers of an event whose field the retired key sealed read the latest
    entry for it instead. `retired_prefix`: the key scopes deleted right after this event (the
    retired keys, this rotation's and any an interrupted one left).
    """

    TOPIC = "factledger.subject.subject_key_rotated.v1"
    retired_prefix: str
    resealed: list[JsonObject]
    command_id: str | None

    def apply(self, aggregate: Subject) -> None:
        aggregate.remember_command(self.command_id)


SUBJECT_EVENTS: tuple[type[Aggregate.Event], ...] = cast(
    "tuple[type[Aggregate.Event], ...]",
    (
        SubjectRegistered,
        SessionRecorded,
        ChangeProposed,
        ChangeConfirmed,
        ChangeRejected,
        FactForgotten,
        SubjectErased,
        MemoryExpirySet,
        ChangeSuperseded,
        SessionReviewed,
        FieldExpirySet,
        SubjectKeyRotated,
    ),
)
