"""A request to forget one item of a list, approved through the ledger (ADR 0160): the
forgotten item's words are unreadable in the event store, the kept items are sealed under
the field key's next generation, and a process with no cache rebuilds the same field from the
log. Runs on SQLite's stores here."""

from __future__ import annotations

import json
from uuid import UUID

import pytest
from unit.application.ledger.test_ledger_forget_generations import FailingWhenArmed

from factledger.application.ledger.commands import (
    ApproveChange,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStoreUnavailableError
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import ListValue
from factledger.testing.ledger_stores import LedgerStore
from factledger.testing.manual_clock import ManualClock

NAMED = "We mostly lose deals to Acme, Quillotron and Zorb."
ASKS = "Please take Quillotron off whatever notes you have on us."
MODEL = Actor(ActorKind.MODEL, "m")
LEAD = Actor(ActorKind.SUBJECT, "lead-9")

pytestmark = pytest.mark.parametrize("ledger_store", ["sqlite"], indirect=True)


def _said(ledger: Ledger, sid: UUID, session_id: str, text: str) -> None:
    at = ledger.clock.now()
    messages = (Message(Role.AGENT, "Who do you compete with?"), Message(Role.SUBJECT, text))
    ledger.record_session(RecordSession("acme", sid, session_id, Channel.CHAT, at, at, messages))


def _proposed(
    ledger: Ledger, sid: UUID, operation: Operation, items: tuple[str, ...], quote: Evidence
) -> UUID:
    cmd = ProposeChange(
        "acme",
        sid,
        "competitors",
        operation,
        ListValue(items),
        Origin.STATED,
        MODEL,
        ledger.subject("acme", sid).profile_version,
        evidence=quote,
    )
    ledger.propose_change(cmd)
    return cmd.change_id


def _readable(ledger: Ledger) -> str:
    events = [
        ledger.mapper.to_domain_event(n).__dict__
        for n in ledger.recorder.select_notifications(1, 1000)
    ]
    return json.dumps(events, default=str)


def test_the_forgotten_item_goes_and_the_kept_ones_survive_a_restart(
    ledger_store: LedgerStore,
) -> None:
    with Ledger(ledger_store.env, keys=ledger_store.keys, clock=ManualClock()) as ledger:
        sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-9")).subject_id
        _said(ledger, sid, "chat-1", NAMED)
        listed = _proposed(
            ledger, sid, Operation.SET, ("Acme", "Quillotron", "Zorb"), Evidence("chat-1", 1, NAMED)
        )
        ledger.approve_change(ApproveChange("acme", sid, listed, "rev", note="Quillotron too"))
        _said(ledger, sid, "chat-2", ASKS)
        request = _proposed(
            ledger, sid, Operation.FORGET, ("Quillotron",), Evidence("chat-2", 1, ASKS)
        )
        ledger.approve_change(ApproveChange("acme", sid, request, "rev"))

        readable = _readable(ledger)
        assert "Quillotron" not in readable  # the value, the line, the request, the note
        assert ledger.subject("acme", sid).fields["competitors"].value == ListValue(
            ("Acme", "Zorb")
        )
    with Ledger(ledger_store.env, keys=ledger_store.keys, clock=ManualClock()) as ledger:
        subject = ledger.subject("acme", sid)
        assert subject.fields["competitors"].value == ListValue(("Acme", "Zorb"))
        assert subject.fields["competitors"].change_id == listed
        assert "Quillotron" not in _readable(ledger)

        # The kept items are the field's words from then on: its next forget takes them.
        ledger.forget_field(ForgetField("acme", sid, "competitors", LEAD, "asked"))
        assert "competitors" not in ledger.subject("acme", sid).fields
        readable = _readable(ledger)
        assert "Acme" not in readable
        assert "Zorb" not in readable
    with Ledger(ledger_store.env, keys=ledger_store.keys, clock=ManualClock()) as ledger:
        assert "competitors" not in ledger.subject("acme", sid).fields


def test_a_key_store_outage_during_the_forget_is_finished_later_and_keeps_the_others(
    ledger_store: LedgerStore,
) -> None:
    """The key store fails while the approval's keys are deleted: the command fails loudly
    (the API answers 503), the forget stays recorded, and the pass over recorded forgets
    finishes the deletion; the kept items stay readable throughout, nothing else is lost."""
    keys = FailingWhenArmed(ledger_store.keys)
    with Ledger(ledger_store.env, keys=keys, clock=ManualClock()) as ledger:
        sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-9")).subject_id
        _said(ledger, sid, "chat-1", NAMED)
        listed = _proposed(
            ledger, sid, Operation.SET, ("Acme", "Quillotron", "Zorb"), Evidence("chat-1", 1, NAMED)
        )
        ledger.approve_change(ApproveChange("acme", sid, listed, "rev"))
        _said(ledger, sid, "chat-2", ASKS)
        request = _proposed(
            ledger, sid, Operation.FORGET, ("Quillotron",), Evidence("chat-2", 1, ASKS)
        )
        keys.armed = True
        with pytest.raises(KeyStoreUnavailableError):
            ledger.approve_change(ApproveChange("acme", sid, request, "rev"))
        keys.armed = False
        kept = ledger.subject("acme", sid).fields["competitors"].value
        assert kept == ListValue(("Acme", "Zorb"))

        ledger.finish_forgetting()

        assert "Quillotron" not in _readable(ledger)
    with Ledger(ledger_store.env, keys=ledger_store.keys, clock=ManualClock()) as ledger:
        assert ledger.subject("acme", sid).fields["competitors"].value == kept
