"""A model's review records the callers' changes it agreed with; reviews stored before it
could load with none."""

from __future__ import annotations

from datetime import UTC, datetime

from eventsourcing.persistence import StoredEvent

from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import SessionReviewed
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Channel, Message, Role

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MODEL = Actor(ActorKind.MODEL, "rule@1")


def test_a_review_stored_before_agreements_loads_with_none(ledger: Ledger) -> None:
    # Given a SessionReviewed stored in its version 1 shape: no class_version, no `agreed`
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-9")).subject_id
    transcript = (Message(Role.SUBJECT, "We order from Initech.", T0),)
    ledger.record_session(RecordSession("acme", sid, "s-1", Channel.CHAT, T0, T0, transcript))
    subject = ledger.subject("acme", sid)
    subject.mark_reviewed("s-1", by=MODEL, proposed=[], superseded=[], at=T0)
    (pending,) = subject.collect_events()
    modern = ledger.mapper.to_stored_event(pending)
    transcoder = ledger.mapper.transcoder
    state = transcoder.decode(modern.state)
    assert state.pop("class_version") == 2
    assert state.pop("agreed") == []
    old = StoredEvent(
        modern.originator_id, modern.originator_version, modern.topic, transcoder.encode(state)
    )
    ledger.recorder.insert_events([old])

    # Then it upcasts to no agreement, and the subject replays as reviewed
    events = [
        ledger.mapper.to_domain_event(n) for n in ledger.recorder.select_notifications(1, 100)
    ]
    (reviewed,) = [e for e in events if isinstance(e, SessionReviewed)]
    assert reviewed.agreed == []
    loaded = ledger.subject("acme", sid)
    assert loaded.has_reviewed("s-1")
    assert loaded.agreed_by == {}
