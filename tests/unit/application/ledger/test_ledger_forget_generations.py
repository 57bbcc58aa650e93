"""Each forget of a field starts a new generation of the field's key: words recorded after a
forget's event are never sealed under the key that forget deletes, however the deletion is
delayed. The race is driven by a key store that runs a write when the deletion starts (no
timing). Runs on SQLite's stores here and on PostgreSQL's from tests/integration/on_postgres.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from uuid import UUID

import pytest
from eventsourcing.persistence import StoredEvent
from support.key_stores import DelegatingKeyStore

from factledger.application.ledger.cipher import field_scope
from factledger.application.ledger.commands import (
    ApproveChange,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStore, KeyStoreUnavailableError
from factledger.domain.events import ChangeConfirmed, FactForgotten
from factledger.domain.proposal import Decision
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.ledger_stores import LedgerStore
from factledger.testing.manual_clock import ManualClock

OLD_WORDS = "Our yearly budget is forty thousand."
OLD_VALUE = "40k a year"
NEW_WORDS = "Actually the budget is now fifty thousand."
NEW_VALUE = "50k a year"
LEAD = Actor(ActorKind.SUBJECT, "lead-9")
MODEL = Actor(ActorKind.MODEL, "m")

pytestmark = pytest.mark.parametrize("ledger_store", ["sqlite"], indirect=True)


class WritesWhenDeleting(DelegatingKeyStore):
    """Runs `before_deleting` once, when the next key deletion starts and before it reaches
    the store: another request's write landing between a forget's event and its keys'
    deletion."""

    def __init__(self, inner: KeyStore) -> None:
        super().__init__(inner)
        self.before_deleting: Callable[[], None] | None = None

    def forget_many(self, scopes: Collection[str]) -> int:
        hook, self.before_deleting = self.before_deleting, None
        if hook is not None:
            hook()
        return self.inner.forget_many(scopes)


class FailingWhenArmed(DelegatingKeyStore):
    def __init__(self, inner: KeyStore) -> None:
        super().__init__(inner)
        self.armed = False

    def forget_many(self, scopes: Collection[str]) -> int:
        if self.armed:
            raise KeyStoreUnavailableError("key store away")
        return self.inner.forget_many(scopes)


def _open(store: LedgerStore, keys: KeyStore) -> Ledger:
    return Ledger(store.env, keys=keys, clock=ManualClock())


def _said(ledger: Ledger, sid: UUID, session_id: str, text: str) -> None:
    at = ledger.clock.now()
    messages = (Message(Role.AGENT, "What is your budget?"), Message(Role.SUBJECT, text))
    ledger.record_session(RecordSession("acme", sid, session_id, Channel.CHAT, at, at, messages))


def _budget(ledger: Ledger, sid: UUID, session_id: str, words: str, value: str) -> UUID:
    """The subject says the budget in a session; a model proposes it and staff approve it."""
    _said(ledger, sid, session_id, words)
    cmd = ProposeChange(
        "acme",
        sid,
        "budget",
        Operation.SET,
        TextValue(value),
        Origin.STATED,
        MODEL,
        ledger.subject("acme", sid).profile_version,
        evidence=Evidence(session_id, 1, words[:20]),
    )
    ledger.propose_change(cmd)
    note = f"Reviewer: confirmed {value} on the call."  # sealed under the field's key
    ledger.approve_change(ApproveChange("acme", sid, cmd.change_id, "rev", note=note))
    return cmd.change_id


def _readable(ledger: Ledger) -> str:
    """Everything the event store decodes (the stream from the start)."""
    events = [
        ledger.mapper.to_domain_event(n).__dict__
        for n in ledger.recorder.select_notifications(1, 1000)
    ]
    return json.dumps(events, default=str)


def _registered(ledger: Ledger) -> UUID:
    return ledger.register_subject(RegisterSubject("acme", "lead", "lead-9")).subject_id


def _forget(sid: UUID, command_id: str | None = None) -> ForgetField:
    return ForgetField("acme", sid, "budget", LEAD, "asked", command_id=command_id)


def test_a_proposal_saved_between_a_forget_and_its_key_deletion_keeps_its_words(
    ledger_store: LedgerStore,
) -> None:
    keys = WritesWhenDeleting(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid = _registered(ledger)
        _budget(ledger, sid, "chat-1", OLD_WORDS, OLD_VALUE)
        # The forget's event is recorded; before its keys go, the subject says a new budget.
        keys.before_deleting = lambda: _budget(ledger, sid, "chat-2", NEW_WORDS, NEW_VALUE)
        ledger.forget_field(_forget(sid))
        assert keys.before_deleting is None  # the write ran inside the window

        readable = _readable(ledger)
        assert OLD_VALUE not in readable
        assert OLD_WORDS not in readable
        assert NEW_VALUE in readable  # the change's own key, not deleted
        assert NEW_WORDS in readable
        # The approval's note: sealed under the field key's next generation, which survives
        assert f"confirmed {NEW_VALUE}" in readable
        assert f"confirmed {OLD_VALUE}" not in readable
        assert ledger.subject("acme", sid).fields["budget"].value == TextValue(NEW_VALUE)
    # A restarted process (no cache) reads the same.
    with _open(ledger_store, ledger_store.keys) as ledger:
        readable = _readable(ledger)
        assert NEW_VALUE in readable
        assert OLD_VALUE not in readable
        assert ledger.subject("acme", sid).fields["budget"].value == TextValue(NEW_VALUE)


def test_the_pass_over_recorded_forgets_takes_the_forgotten_generation_and_keeps_the_next(
    ledger_store: LedgerStore,
) -> None:
    """The deletion fails; the field is said again; the pass finishes the forget. Without
    generations the pass had to choose between the new words and the forgotten ones."""
    keys = FailingWhenArmed(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid = _registered(ledger)
        _budget(ledger, sid, "chat-1", OLD_WORDS, OLD_VALUE)
        keys.armed = True
        with pytest.raises(KeyStoreUnavailableError):
            ledger.forget_field(_forget(sid))
        keys.armed = False
        assert OLD_VALUE in _readable(ledger)  # recorded, keys still there
        _budget(ledger, sid, "chat-2", NEW_WORDS, NEW_VALUE)

        ledger.finish_forgetting()

        readable = _readable(ledger)
        assert OLD_VALUE not in readable
        assert OLD_WORDS not in readable
        assert NEW_VALUE in readable
        assert NEW_WORDS in readable
        assert f"confirmed {NEW_VALUE}" in readable


def test_each_forget_names_the_generation_it_shreds_and_words_after_it_use_the_next(
    ledger_store: LedgerStore,
) -> None:
    with _open(ledger_store, ledger_store.keys) as ledger:
        sid = _registered(ledger)
        _budget(ledger, sid, "chat-1", OLD_WORDS, OLD_VALUE)
        ledger.forget_field(_forget(sid))
        _budget(ledger, sid, "chat-2", NEW_WORDS, NEW_VALUE)
        ledger.forget_field(_forget(sid))
        events = list(ledger.events.get(sid))
        generations = [
            (type(e).__name__, e.key_generation)
            for e in events
            if isinstance(e, ChangeConfirmed | FactForgotten)
        ]
        assert generations == [
            ("ChangeConfirmed", 0),
            ("FactForgotten", 0),
            ("ChangeConfirmed", 1),
            ("FactForgotten", 1),
        ]
        assert ledger.subject("acme", sid).key_generation("budget") == 2
        readable = _readable(ledger)
        for words in (OLD_VALUE, NEW_VALUE, OLD_WORDS, NEW_WORDS):
            assert words not in readable


def _as_stored_before_generations(ledger: Ledger, event: object, version: int) -> StoredEvent:
    """The event as a process without key generations stored it: sealed under the field's
    one scope (generation 0), with no `key_generation` and the class version before it."""
    stored = ledger.mapper.to_stored_event(event)  # type: ignore[arg-type]
    transcoder = ledger.mapper.transcoder
    state = transcoder.decode(stored.state)
    state.pop("key_generation")
    state["class_version"] = version
    return StoredEvent(
        stored.originator_id, stored.originator_version, stored.topic, transcoder.encode(state)
    )


def test_a_ledger_written_before_generations_keeps_reading_and_its_next_forget_takes_all(
    ledger_store: LedgerStore,
) -> None:
    """An older process forgot the budget (no generation named), then approved a new budget
    with a note sealed under the field's same scope, with a new key. The new code reads it
    all, seals what follows under generation 1, and its next forget takes generation 0 too."""
    note = f"Approved: {NEW_WORDS}"
    with _open(ledger_store, ledger_store.keys) as ledger:
        sid = _registered(ledger)
        _budget(ledger, sid, "chat-1", OLD_WORDS, OLD_VALUE)
        subject = ledger.subject("acme", sid)
        subject.forget_field("budget", by=Decision(by=LEAD), reason="asked", at=ledger.clock.now())
        (forget,) = subject.collect_events()
        ledger.recorder.insert_events([_as_stored_before_generations(ledger, forget, 3)])
        ledger.keys.forget(field_scope(sid, "budget"))  # that process deleted its key
        _said(ledger, sid, "chat-2", NEW_WORDS)
        cmd = ProposeChange(
            "acme",
            sid,
            "budget",
            Operation.SET,
            TextValue(NEW_VALUE),
            Origin.STATED,
            MODEL,
            ledger.subject("acme", sid).profile_version,
            evidence=Evidence("chat-2", 1, NEW_WORDS[:20]),
        )
        ledger.propose_change(cmd)
        subject = ledger.subject("acme", sid)
        staff = Decision(by=Actor(ActorKind.STAFF, "rev"), note=note)
        subject.confirm(cmd.change_id, staff, at=ledger.clock.now())
        (confirmed,) = subject.collect_events()
        object.__setattr__(confirmed, "key_generation", 0)  # sealed as that process did
        ledger.recorder.insert_events([_as_stored_before_generations(ledger, confirmed, 4)])

        reloaded = ledger.subject("acme", sid)
        recorded = [e for e in ledger.events.get(sid) if isinstance(e, FactForgotten)]
        assert [e.key_generation for e in recorded] == [None]
        assert reloaded.key_generation("budget") == 1
        assert reloaded.fields["budget"].value == TextValue(NEW_VALUE)
        assert note in _readable(ledger)

        ledger.forget_field(_forget(sid))
        forgets = [e for e in ledger.events.get(sid) if isinstance(e, FactForgotten)]
        assert [e.key_generation for e in forgets] == [None, 1]
        readable = _readable(ledger)
        for words in (note, NEW_VALUE, OLD_VALUE, OLD_WORDS):
            assert words not in readable
