"""A recorded session keeps its conversation type (which guidance reads it); sessions stored
before sessions had one load with none, and their fingerprint does not change."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import SessionRecorded
from factledger.domain.sessions import BEFORE_KEYS, SessionRecord
from factledger.domain.transcript import Channel, Message, Role

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _record(ledger: Ledger, conversation_type: str | None) -> UUID:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-9")).subject_id
    transcript = (Message(Role.SUBJECT, "We are twelve people.", T0),)
    cmd = RecordSession(
        "acme", sid, "s-1", Channel.CHAT, T0, T0, transcript, conversation_type=conversation_type
    )
    ledger.record_session(cmd)
    return sid


def _recorded(ledger: Ledger) -> SessionRecorded:
    events = [
        ledger.mapper.to_domain_event(n) for n in ledger.recorder.select_notifications(1, 100)
    ]
    (event,) = [e for e in events if isinstance(e, SessionRecorded)]
    return event


def test_a_session_records_its_conversation_type(ledger: Ledger) -> None:
    sid = _record(ledger, "sales_discovery")
    assert _recorded(ledger).conversation_type == "sales_discovery"
    assert ledger.subject("acme", sid).sessions["s-1"].conversation_type == "sales_discovery"


def test_a_session_recorded_before_conversation_types_loads_with_none(ledger: Ledger) -> None:
    # Given a SessionRecorded stored in its version 1 shape: no class_version, no type
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-9")).subject_id
    subject = ledger.subject("acme", sid)
    transcript = (Message(Role.SUBJECT, "We are twelve people.", T0),)
    subject.record_session(
        SessionRecord("s-1", Channel.CHAT, T0, T0, transcript), at=T0, fingerprint_key=BEFORE_KEYS
    )
    (pending,) = subject.collect_events()
    modern = ledger.mapper.to_stored_event(pending)
    transcoder = ledger.mapper.transcoder
    state = transcoder.decode(modern.state)
    assert state.pop("class_version") == 2
    del state["conversation_type"]
    old = StoredEvent(
        modern.originator_id, modern.originator_version, modern.topic, transcoder.encode(state)
    )
    ledger.recorder.insert_events([old])

    # Then it upcasts to no conversation type, and the subject replays with the session
    assert _recorded(ledger).conversation_type is None
    assert ledger.subject("acme", sid).sessions["s-1"].conversation_type is None


def test_an_untyped_session_keeps_the_fingerprint_it_had_before_types() -> None:
    untyped = SessionRecord("s-1", Channel.CHAT, T0, T0, (Message(Role.SUBJECT, "hi", T0),))
    body = {
        "channel": "chat",
        "started_at": T0.isoformat(),
        "ended_at": T0.isoformat(),
        "transcript": [{"role": "subject", "text": "hi", "at": T0.isoformat()}],
        "summary": None,
        "withheld_count": 0,
    }
    before = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    assert untyped.fingerprint(BEFORE_KEYS) == before
    typed = replace(untyped, conversation_type="support_ticket")
    assert (
        typed.fingerprint(BEFORE_KEYS) != before
    )  # a retry naming another type is another session
