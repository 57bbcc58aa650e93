"""Forgetting a field records, in clear and as ids only, where its words were said, so the
sync can forget the backend memories drawn from them after the field's key is gone."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.persistence import StoredEvent

from factledger.application.ledger.commands import (
    ApproveChange,
    ConfirmChange,
    ForgetField,
    ForgetMemory,
    ProposeChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import FactForgotten
from factledger.domain.proposal import Decision
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

LEAD = Actor(ActorKind.SUBJECT, "lead-7")
STAFF = Actor(ActorKind.STAFF, "rev")
SAID = (
    "Why did you switch?",
    "Their delivery delays were hurting us.",
    "Is that the whole story?",
    "Yes, the delays, and the prices too.",
)


def _session(ledger: Ledger, sid: UUID, session_id: str, clock: ManualClock) -> None:
    roles = (Role.AGENT, Role.SUBJECT) * 2
    transcript = tuple(Message(role, text) for role, text in zip(roles, SAID, strict=True))
    at = clock.now()
    ledger.record_session(RecordSession("acme", sid, session_id, Channel.CHAT, at, at, transcript))


def _propose(ledger: Ledger, sid: UUID, field: str, value: str, said: Evidence) -> UUID:
    cmd = ProposeChange(
        "acme",
        sid,
        field,
        Operation.SET,
        TextValue(value),
        Origin.STATED,
        Actor(ActorKind.MODEL, "m"),
        ledger.subject("acme", sid).profile_version,
        evidence=said,
    )
    ledger.propose_change(cmd)
    return cmd.change_id


def _story(ledger: Ledger, clock: ManualClock) -> UUID:
    """switch_reason: approved from chat-1 #1, then a new value said in chat-2 #1 and
    confirmed by the lead in the later chat-3 #3, a rejected one from chat-2 #3, and a pending
    one from chat-3 #1; supplier from chat-2 #1."""
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-7")).subject_id
    for session_id in ("chat-1", "chat-2"):
        _session(ledger, sid, session_id, clock)
    first = _propose(ledger, sid, "switch_reason", "delays", Evidence("chat-1", 1, "delivery"))
    ledger.approve_change(ApproveChange("acme", sid, first, "rev"))
    second = _propose(ledger, sid, "switch_reason", "delays", Evidence("chat-2", 1, "delays"))
    _session(ledger, sid, "chat-3", clock)
    ledger.confirm_change(ConfirmChange("acme", sid, second, Evidence("chat-3", 3, "Yes")))
    rejected = _propose(ledger, sid, "switch_reason", "prices", Evidence("chat-2", 3, "prices"))
    ledger.reject_change(RejectChange("acme", sid, rejected, STAFF, "not the reason"))
    supplier = _propose(ledger, sid, "supplier", "Supplier B", Evidence("chat-2", 1, "delays"))
    ledger.approve_change(ApproveChange("acme", sid, supplier, "rev"))
    _propose(ledger, sid, "switch_reason", "the delays", Evidence("chat-3", 1, "delivery"))
    return sid


def _forgotten(ledger: Ledger) -> list[FactForgotten]:
    notifications = ledger.recorder.select_notifications(1, 1000)
    events = (ledger.mapper.to_domain_event(n) for n in notifications)
    return [e for e in events if isinstance(e, FactForgotten)]


def test_forgetting_a_field_records_where_it_was_said_and_confirmed(
    ledger: Ledger, clock: ManualClock
) -> None:
    # Given a field set twice (approved; confirmed by the lead), rejected once, pending once
    sid = _story(ledger, clock)

    # When it is forgotten (its key is deleted right after the event is saved)
    ledger.forget_field(ForgetField("acme", sid, "switch_reason", LEAD, "asked"))

    # Then the event, read back without the key, still names every place its words were said
    # or confirmed, the rejected change's included: a reviewer judged its value, but the
    # words were the subject's about the field, and the subject asked for them to go
    (event,) = _forgotten(ledger)
    assert event.evidence_refs == [
        {"session_id": "chat-1", "message_index": 1},
        {"session_id": "chat-2", "message_index": 1},
        {"session_id": "chat-2", "message_index": 3},
        {"session_id": "chat-3", "message_index": 1},
        {"session_id": "chat-3", "message_index": 3},
    ]
    # and the references are ids only: no quote of what was said is stored with them
    stored = b"".join(n.state for n in ledger.recorder.select_notifications(1, 1000))
    assert b"chat-3" in stored
    for secret in (b"delivery", b"delays", b"hurting", b"prices"):
        assert secret not in stored


def test_forgetting_a_memory_id_records_no_evidence(ledger: Ledger, clock: ManualClock) -> None:
    sid = _story(ledger, clock)
    ledger.forget_memory(ForgetMemory("acme", sid, "mem-1", LEAD, "asked"))
    (event,) = _forgotten(ledger)
    assert (event.memory_id, event.evidence_refs) == ("mem-1", [])


def test_a_fact_forgotten_stored_before_evidence_refs_still_loads(
    ledger: Ledger, clock: ManualClock
) -> None:
    # Given a FactForgotten stored in its version 1 shape: no class_version, no evidence_refs
    sid = _story(ledger, clock)
    subject = ledger.subject("acme", sid)
    subject.forget_field("supplier", by=Decision(by=LEAD), reason="asked", at=clock.now())
    (pending,) = subject.collect_events()
    modern = ledger.mapper.to_stored_event(pending)
    transcoder = ledger.mapper.transcoder
    state = transcoder.decode(modern.state)
    assert state.pop("class_version") == 5
    later = ("evidence_refs", "request_id", "relayed_by", "key_generation", "kept", "kept_standing")
    for name in later:  # v2 to v5
        del state[name]
    old = StoredEvent(
        modern.originator_id, modern.originator_version, modern.topic, transcoder.encode(state)
    )
    ledger.recorder.insert_events([old])

    # When the event and the subject are loaded
    (event,) = _forgotten(ledger)
    reloaded = ledger.subject("acme", sid)

    # Then the event upcasts to no references and the subject replays without the field
    assert (event.field, event.evidence_refs, event.request_id) == ("supplier", [], None)
    assert (event.kept, event.kept_standing) == (None, None)
    assert "supplier" not in reloaded.fields
    assert "switch_reason" in reloaded.fields
    assert reloaded.version == modern.originator_version
