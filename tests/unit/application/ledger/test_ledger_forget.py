"""Forget makes a field's content unrecoverable in the event store itself (ADR 0003)."""

from __future__ import annotations

import json
from collections.abc import Collection
from contextlib import nullcontext
from datetime import UTC, datetime

import pytest
from support.key_stores import DelegatingKeyStore

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.application.ledger.commands import (
    ApproveChange,
    EraseSubject,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStore
from factledger.domain.errors import FieldNotPresentError, SubjectErasedError
from factledger.domain.events import ChangeConfirmed, ChangeProposed, SessionRecorded
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.testing.ledger_stores import LedgerStore, open_ledger

WHEN = datetime(2026, 6, 18, 11, 0, tzinfo=UTC)
REASON_SAID = "Their delivery delays were hurting us."
LEAD = Actor(ActorKind.SUBJECT, "lead-7")


def story(ledger: Ledger) -> ProposeChange:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-7")).subject_id
    ledger.record_session(
        RecordSession(
            "acme",
            sid,
            "chat-1",
            Channel.CHAT,
            WHEN,
            WHEN,
            (Message(Role.AGENT, "Why did you switch?"), Message(Role.SUBJECT, REASON_SAID)),
        )
    )
    for field, value in (("switch_reason", "delivery delays"), ("supplier", "Supplier B")):
        cmd = ProposeChange(
            "acme",
            sid,
            field,
            Operation.SET,
            TextValue(value),
            Origin.STATED,
            Actor(ActorKind.MODEL, "m"),
            ledger.subject("acme", sid).profile_version,
            evidence=Evidence("chat-1", 1, "delivery delays"),
            condition="for now",
            rationale="quoted",
        )
        ledger.propose_change(cmd)
        ledger.approve_change(ApproveChange("acme", sid, cmd.change_id, "rev"))
    return cmd


def proposals(ledger: Ledger) -> dict[str, ChangeProposed]:
    events = (
        ledger.mapper.to_domain_event(n) for n in ledger.recorder.select_notifications(1, 100)
    )
    return {e.field: e for e in events if isinstance(e, ChangeProposed)}


def test_personal_fields_are_never_stored_in_clear(ledger: Ledger) -> None:
    story(ledger)
    stored = b"".join(n.state for n in ledger.recorder.select_notifications(1, 100))
    for secret in (b"delivery delays", b"Supplier B", b"for now", b"hurting us"):
        assert secret not in stored
    assert proposals(ledger)["switch_reason"].value == {"type": "text", "value": "delivery delays"}


def test_a_forgotten_field_reads_back_as_nothing_while_the_rest_survives(
    ledger_store: LedgerStore, ledger: Ledger
) -> None:
    sid = story(ledger).subject_id
    ledger.forget_field(ForgetField("acme", sid, "switch_reason", LEAD, "asked"))
    with open_ledger(ledger_store) if ledger_store.shared else nullcontext(ledger) as reader:
        forgotten, kept = proposals(reader)["switch_reason"], proposals(reader)["supplier"]
        subject = reader.subject("acme", sid)
    assert (forgotten.value, forgotten.condition, forgotten.evidence, forgotten.rationale) == (
        None,
        None,
        None,
        None,
    )
    assert kept.value == {"type": "text", "value": "Supplier B"}
    assert kept.condition == "for now"
    assert set(subject.fields) == {"supplier"}
    # The line that stated the forgotten field goes (it stated the supplier too: the line is
    # the subject's words about the forgotten field, and the supplier's own proposal keeps
    # its quote under its own key); the agent's question stays.
    assert subject.sessions["chat-1"].messages == (
        (Role.AGENT, "Why did you switch?"),
        (Role.SUBJECT, ""),
    )


def test_a_field_set_again_after_forget_uses_a_new_key(ledger: Ledger) -> None:
    sid = story(ledger).subject_id
    ledger.forget_field(ForgetField("acme", sid, "switch_reason", LEAD, "asked"))
    again = ProposeChange(
        "acme",
        sid,
        "switch_reason",
        Operation.SET,
        TextValue("price"),
        Origin.INFERRED,
        Actor(ActorKind.MODEL, "m"),
        ledger.subject("acme", sid).profile_version,
    )
    ledger.propose_change(again)
    ledger.approve_change(ApproveChange("acme", sid, again.change_id, "rev"))
    assert ledger.subject("acme", sid).fields["switch_reason"].value == TextValue("price")
    confirmed = [
        ledger.mapper.to_domain_event(n) for n in ledger.recorder.select_notifications(1, 100)
    ]
    assert (
        sum(isinstance(e, ChangeConfirmed) and e.field == "switch_reason" for e in confirmed) == 2
    )


class FailingOnce(DelegatingKeyStore):
    """A key store whose first `forget` fails, as a crash between event and key deletion."""

    def __init__(self, inner: KeyStore) -> None:
        super().__init__(inner)
        self.failed = False

    def forget_many(self, scopes: Collection[str]) -> int:
        if not self.failed:
            self.failed = True
            raise OSError("disk gone")
        return self.inner.forget_many(scopes)


def test_an_interrupted_forget_is_finished_by_the_next_attempt(ledger_store: LedgerStore) -> None:
    keys = FailingOnce(ledger_store.keys)
    with Ledger(ledger_store.env, keys=keys) as ledger:
        sid = story(ledger).subject_id
        with pytest.raises(OSError, match="disk gone"):
            ledger.forget_field(ForgetField("acme", sid, "switch_reason", LEAD, "asked"))
        assert proposals(ledger)["switch_reason"].value is not None  # the key survived
        with pytest.raises(FieldNotPresentError):
            ledger.forget_field(ForgetField("acme", sid, "switch_reason", LEAD, "asked again"))
        assert proposals(ledger)["switch_reason"].value is None


def test_erasing_a_subject_shreds_transcripts_and_fields_and_empties_the_views(
    ledger_store: LedgerStore, ledger: Ledger
) -> None:
    sid = story(ledger).subject_id
    views = ProfileProjection(InMemoryViewStore("profile"))
    follower = Follower(ledger, [views])
    follower.catch_up()
    erase = EraseSubject("acme", sid, LEAD, "the lead asked to be forgotten")
    assert ledger.erase_subject(erase).applied
    assert not ledger.erase_subject(erase).applied  # a retry is a no-op
    follower.catch_up()
    with open_ledger(ledger_store) if ledger_store.shared else nullcontext(ledger) as reader:
        events = [
            reader.mapper.to_domain_event(n) for n in reader.recorder.select_notifications(1, 100)
        ]
        subject = reader.subject("acme", sid)
    sessions = [e for e in events if isinstance(e, SessionRecorded)]
    # Every line's key went: each message keeps its place and role, never its words.
    assert [[line["text"] for line in s.transcript] for s in sessions] == [[None, None]]
    assert all(line["forgotten"] for s in sessions for line in s.transcript)
    assert all(p.value is None for p in events if isinstance(p, ChangeProposed))
    assert subject.erased
    with pytest.raises(SubjectErasedError):
        ledger.forget_field(ForgetField("acme", sid, "supplier", LEAD, "late"))
    assert str(sid) not in json.dumps(views.dump())
    live = views.dump()
    views.rebuild(ledger)
    assert views.dump() == live
