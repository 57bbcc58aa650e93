"""A decision in the subject's words records who relayed them, beside them; decisions stored
before relays were load with none; an agent or a model may never be the relay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import StoredEvent

from factledger.application.ledger.commands import (
    ConfirmChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.event_log import LoggedEvent
from factledger.application.ledger.event_views import event_body
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import ConfirmationNotAllowedError
from factledger.domain.events import ChangeConfirmed, ChangeRejected
from factledger.domain.proposal import Decision
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, MessageDecision, Role, Verdict
from factledger.domain.values import TextValue

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CHANNEL = Actor(ActorKind.SYSTEM, "chat-platform")


def _proposed(ledger: Ledger, field: str = "supplier") -> tuple[UUID, UUID]:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-5")).subject_id
    cmd = ProposeChange(
        "acme",
        sid,
        field,
        Operation.SET,
        TextValue("Initech"),
        Origin.INFERRED,
        Actor(ActorKind.MODEL, "m"),
        0,
    )
    ledger.propose_change(cmd)
    return sid, cmd.change_id


def _answered(
    ledger: Ledger, sid: UUID, change_id: UUID, verdict: Verdict, relay: Actor | None
) -> None:
    transcript = (
        Message(
            Role.AGENT, "Is Initech your supplier?", T0, MessageDecision(Verdict.ASKS, change_id)
        ),
        Message(
            Role.SUBJECT,
            "Yes." if verdict is Verdict.CONFIRMS else "No.",
            T0,
            MessageDecision(verdict, change_id),
            relayed_by=relay,
        ),
    )
    ledger.record_session(
        RecordSession("acme", sid, "s-1", Channel.CHAT, T0, T0 + timedelta(minutes=1), transcript)
    )


def _events(ledger: Ledger) -> list[Any]:
    return [ledger.mapper.to_domain_event(n) for n in ledger.recorder.select_notifications(1, 100)]


def test_a_confirmation_in_a_relayed_line_records_the_relay(ledger: Ledger) -> None:
    sid, change_id = _proposed(ledger)
    _answered(ledger, sid, change_id, Verdict.CONFIRMS, CHANNEL)
    (confirmed,) = [e for e in _events(ledger) if isinstance(e, ChangeConfirmed)]
    assert confirmed.relayed_by == CHANNEL.to_payload()
    subject = ledger.subject("acme", sid)
    assert subject.change(change_id).relayed_by == CHANNEL
    assert subject.fields["supplier"].relayed_by == CHANNEL
    # The subject confirms under its id, never its reference (which erasure must shred).
    assert subject.fields["supplier"].confirmed_by == Actor(ActorKind.SUBJECT, str(sid))


def test_a_decline_in_a_relayed_line_records_the_relay(ledger: Ledger) -> None:
    sid, change_id = _proposed(ledger)
    _answered(ledger, sid, change_id, Verdict.DECLINES, CHANNEL)
    (rejected,) = [e for e in _events(ledger) if isinstance(e, ChangeRejected)]
    assert rejected.relayed_by == CHANNEL.to_payload()
    assert ledger.subject("acme", sid).change(change_id).relayed_by == CHANNEL


def test_the_channel_citing_the_subjects_words_is_recorded_as_their_relay(ledger: Ledger) -> None:
    sid, change_id = _proposed(ledger)
    transcript = (Message(Role.SUBJECT, "Yes, Initech.", T0),)
    ledger.record_session(RecordSession("acme", sid, "s-1", Channel.CHAT, T0, T0, transcript))
    said = Evidence("s-1", 0, "Yes, Initech.")
    ledger.confirm_change(ConfirmChange("acme", sid, change_id, said, relayed_by=CHANNEL))
    assert ledger.subject("acme", sid).change(change_id).relayed_by == CHANNEL


@pytest.mark.parametrize("kind", [ActorKind.AGENT, ActorKind.MODEL])
def test_an_agent_or_a_model_may_never_relay_the_subjects_words(
    ledger: Ledger, kind: ActorKind
) -> None:
    sid, change_id = _proposed(ledger)
    transcript = (Message(Role.SUBJECT, "Yes, Initech.", T0),)
    ledger.record_session(RecordSession("acme", sid, "s-1", Channel.CHAT, T0, T0, transcript))
    said = Evidence("s-1", 0, "Yes, Initech.")
    forged = ConfirmChange("acme", sid, change_id, said, relayed_by=Actor(kind, "bot"))
    with pytest.raises(ConfirmationNotAllowedError, match="may not relay"):
        ledger.confirm_change(forged)
    subject = ledger.subject("acme", sid)
    with pytest.raises(ConfirmationNotAllowedError, match="only the subject's words"):
        subject.confirm(
            change_id, Decision(Actor(ActorKind.STAFF, "rev"), relayed_by=CHANNEL), at=T0
        )


def test_decisions_stored_before_relays_load_with_none(ledger: Ledger) -> None:
    # Given a ChangeConfirmed (version 3) and a ChangeRejected (version 1) stored without it
    sid, change_id = _proposed(ledger)
    second = ProposeChange(
        "acme",
        sid,
        "budget",
        Operation.SET,
        TextValue("9k"),
        Origin.INFERRED,
        Actor(ActorKind.MODEL, "m"),
        0,
    )
    ledger.propose_change(second)
    subject = ledger.subject("acme", sid)
    staff = Decision(by=Actor(ActorKind.STAFF, "rev"))
    subject.confirm(change_id, staff, at=ledger.clock.now())
    subject.reject(second.change_id, by=staff, reason="no", at=ledger.clock.now())
    transcoder = ledger.mapper.transcoder
    olds = []
    for pending, version in zip(subject.collect_events(), (5, 2), strict=True):
        modern = ledger.mapper.to_stored_event(pending)
        state = transcoder.decode(modern.state)
        assert state.pop("class_version") == version
        assert state.pop("relayed_by") is None
        if version == 5:
            assert state.pop("key_generation") == 0
            state["class_version"] = 3
        olds.append(
            StoredEvent(
                modern.originator_id,
                modern.originator_version,
                modern.topic,
                transcoder.encode(state),
            )
        )
    ledger.recorder.insert_events(olds)

    # Then both upcast to no relay, and the subject replays with its decisions
    decided = [e for e in _events(ledger) if isinstance(e, ChangeConfirmed | ChangeRejected)]
    assert [e.relayed_by for e in decided] == [None, None]
    reloaded = ledger.subject("acme", sid)
    assert reloaded.fields["supplier"].relayed_by is None
    assert reloaded.change(second.change_id).relayed_by is None


@pytest.mark.parametrize("content", [True, False])
def test_the_stream_and_webhooks_carry_the_relay_with_or_without_content(
    ledger: Ledger, content: bool
) -> None:
    """The relay is who acted, not what was said: roles that may not read content (analysts)
    still see it on the event stream and in webhook bodies."""
    sid, change_id = _proposed(ledger)
    _answered(ledger, sid, change_id, Verdict.CONFIRMS, CHANNEL)
    (confirmed,) = [e for e in _events(ledger) if isinstance(e, ChangeConfirmed)]
    logged = LoggedEvent(9, sid, "lead", "change_confirmed", confirmed)
    body = event_body(logged, set(), content=content)
    assert body["payload"]["relayed_by"] == {"kind": "system", "id": "chat-platform"}
    assert (body["payload"]["evidence"] or {}).get("quote") == ("Yes." if content else None)
