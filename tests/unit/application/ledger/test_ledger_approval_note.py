"""A reviewer's approval note is recorded with the decision, encrypted like the other personal
payload fields (so forgetting the field makes it unreadable), and shown where the decision is."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.persistence import StoredEvent

from factledger.application.ledger.commands import (
    ApproveChange,
    ForgetField,
    ProposeChange,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import ChangeConfirmed
from factledger.domain.proposal import Decision
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue

NOTE = "checked with her sister at the clinic"
LEAD = Actor(ActorKind.SUBJECT, "lead-7")


def _inferred(ledger: Ledger) -> tuple[UUID, UUID]:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-7")).subject_id
    cmd = ProposeChange(
        "acme",
        sid,
        "supplier",
        Operation.SET,
        TextValue("Supplier B"),
        Origin.INFERRED,
        Actor(ActorKind.MODEL, "m"),
        0,
    )
    ledger.propose_change(cmd)
    return sid, cmd.change_id


def _confirmed(ledger: Ledger) -> ChangeConfirmed:
    events = [
        ledger.mapper.to_domain_event(n) for n in ledger.recorder.select_notifications(1, 100)
    ]
    (event,) = [e for e in events if isinstance(e, ChangeConfirmed)]
    return event


def test_an_approval_records_its_note_encrypted(ledger: Ledger) -> None:
    sid, change_id = _inferred(ledger)
    ledger.approve_change(ApproveChange("acme", sid, change_id, "rev", note=NOTE))

    assert _confirmed(ledger).note == NOTE
    assert ledger.subject("acme", sid).change(change_id).note == NOTE
    stored = b"".join(n.state for n in ledger.recorder.select_notifications(1, 100))
    assert NOTE.encode() not in stored


def test_forgetting_the_field_makes_the_note_unreadable(ledger: Ledger) -> None:
    sid, change_id = _inferred(ledger)
    ledger.approve_change(ApproveChange("acme", sid, change_id, "rev", note=NOTE))
    ledger.forget_field(ForgetField("acme", sid, "supplier", LEAD, "asked"))

    assert _confirmed(ledger).note is None
    assert ledger.subject("acme", sid).change(change_id).note is None


def test_a_change_confirmed_stored_before_notes_still_loads(ledger: Ledger) -> None:
    # Given a ChangeConfirmed stored in its version 1 shape: no class_version, no note
    sid, change_id = _inferred(ledger)
    subject = ledger.subject("acme", sid)
    subject.confirm(change_id, Decision(by=Actor(ActorKind.STAFF, "rev")), at=ledger.clock.now())
    (pending,) = subject.collect_events()
    modern = ledger.mapper.to_stored_event(pending)
    transcoder = ledger.mapper.transcoder
    state = transcoder.decode(modern.state)
    assert state.pop("class_version") == 5
    del state["key_generation"]
    del state["note"]
    del state["said_at"]
    del state["relayed_by"]
    old = StoredEvent(
        modern.originator_id, modern.originator_version, modern.topic, transcoder.encode(state)
    )
    ledger.recorder.insert_events([old])

    # Then it upcasts to no note, and the subject replays with the approved value
    assert _confirmed(ledger).note is None
    reloaded = ledger.subject("acme", sid)
    assert reloaded.fields["supplier"].value == TextValue("Supplier B")
    assert reloaded.change(change_id).note is None
