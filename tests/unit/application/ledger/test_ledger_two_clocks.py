"""A proposal records when its evidence was said (ChangeProposed version 2); one stored
before it did still replays, and the views then date the value by its session's start."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import pytest
from eventsourcing.persistence import StoredEvent

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import (
    ApproveChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.queries import Clock
from factledger.application.ledger.records import proposal_of
from factledger.domain.events import ChangeProposed
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import OPEN_SCHEMA, TextValue
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.testing.manual_clock import ManualClock

QUOTE = "We work with Supplier B."


def _said_session(ledger: Ledger, clock: ManualClock) -> tuple[UUID, Message]:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-2")).subject_id
    started = clock.now() - timedelta(days=30)
    said = Message(Role.SUBJECT, QUOTE, started + timedelta(minutes=5))
    cmd = RecordSession("acme", sid, "call-1", Channel.VOICE, started, said.at, (said,))
    ledger.record_session(cmd)
    return sid, said


def _proposal(sid: UUID) -> ProposeChange:
    return ProposeChange(
        "acme",
        sid,
        "supplier",
        Operation.SET,
        TextValue("Supplier B"),
        Origin.STATED,
        Actor(ActorKind.MODEL, "m"),
        0,
        evidence=Evidence("call-1", 0, QUOTE),
    )


def _proposed(ledger: Ledger) -> ChangeProposed:
    events = [
        ledger.mapper.to_domain_event(n) for n in ledger.recorder.select_notifications(1, 100)
    ]
    (event,) = [e for e in events if isinstance(e, ChangeProposed)]
    return event


def _views(ledger: Ledger) -> ViewStoreProfileReader:
    projection = ProfileProjection(InMemoryViewStore("profile"))
    projection.rebuild(ledger)
    return ViewStoreProfileReader(projection.store)


def test_a_proposal_records_when_its_evidence_was_said(ledger: Ledger, clock: ManualClock) -> None:
    sid, said = _said_session(ledger, clock)
    cmd = _proposal(sid)
    ledger.propose_change(cmd)
    assert _proposed(ledger).said_at == said.at
    clock.advance(timedelta(days=2))
    ledger.approve_change(ApproveChange("acme", sid, cmd.change_id, "rev"))

    reader = _views(ledger)
    (entry,) = reader.history("acme", sid)
    assert (entry.said_at, entry.known_at) == (said.at, clock.now())
    assert reader.as_of("acme", sid, said.at, Clock.SAID).fields["supplier"].known_at == (
        clock.now()
    )
    with pytest.raises(NotFoundError):  # the ledger heard of the lead only a month later
        reader.as_of("acme", sid, said.at, Clock.KNOWN)


def test_a_proposal_stored_before_it_carried_the_time_still_replays(
    ledger: Ledger, clock: ManualClock
) -> None:
    # Given a ChangeProposed stored in its version 1 shape: no class_version, no said_at
    sid, said = _said_session(ledger, clock)
    cmd = _proposal(sid)
    subject = ledger.subject("acme", sid)
    subject.propose(proposal_of(cmd), OPEN_SCHEMA, at=clock.now())
    (pending,) = subject.collect_events()
    modern = ledger.mapper.to_stored_event(pending)
    transcoder = ledger.mapper.transcoder
    state = transcoder.decode(modern.state)
    assert state.pop("class_version") == 2
    del state["said_at"]
    old = StoredEvent(
        modern.originator_id, modern.originator_version, modern.topic, transcoder.encode(state)
    )
    ledger.recorder.insert_events([old])

    # Then it upcasts to no time; the subject replays and the change can be approved
    assert _proposed(ledger).said_at is None
    clock.advance(timedelta(days=2))
    ledger.approve_change(ApproveChange("acme", sid, cmd.change_id, "rev"))

    # and a rebuild of the views dates the value by its session's start, and by the
    # decision on the ledger's clock
    (entry,) = _views(ledger).history("acme", sid)
    started = said.at - timedelta(minutes=5)
    assert (entry.said_at, entry.known_at) == (started, clock.now())
