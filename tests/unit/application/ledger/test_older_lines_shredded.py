"""A ledger written before per-line keys: a session's transcript is one ciphertext under the
subject's key. Forgetting a field it stated rotates the subject's key: the forgotten line is
unreadable in the event store (and every reader of it), the other lines, the reference and
the reasons still read, and an interrupted rotation is finished by the pass over recorded
forgets. Runs on SQLite's stores here and on PostgreSQL's from tests/integration/on_postgres.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from uuid import UUID

import pytest
from support.key_stores import DelegatingKeyStore
from support.older_sealing import older_log

from factledger.adapters.in_memory.event_store import popo_env
from factledger.application.ledger.cipher import PREFIX, subject_scope
from factledger.application.ledger.commands import (
    ApproveChange,
    EraseSubject,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStore, KeyStoreUnavailableError
from factledger.domain.events import FactForgotten, SessionRecorded, SubjectKeyRotated
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.ledger_stores import LedgerStore
from factledger.testing.manual_clock import ManualClock

FORGOTTEN = "We left them over the Quillfeather delivery delays."
KEPT = "Onboarding with the Marrowgate team went well."
OTHER = "Our office moved to Tinderbrook last spring."
STAFF = Actor(ActorKind.STAFF, "reviewer-1")

pytestmark = pytest.mark.parametrize("ledger_store", ["sqlite"], indirect=True)


def _older_subject(store: LedgerStore, keys: KeyStore) -> UUID:
    """A lead as a ledger before per-line keys wrote it, over the store's own keys."""
    clock = ManualClock()
    scratch = Ledger(popo_env(), clock=clock, keys=keys)
    try:
        sid = scratch.register_subject(RegisterSubject("acme", "lead", "lead-31")).subject_id
        for session, lines in (
            ("chat-1", (Message(Role.AGENT, "Why switch?"), Message(Role.SUBJECT, FORGOTTEN))),
            ("chat-2", (Message(Role.SUBJECT, KEPT), Message(Role.SUBJECT, OTHER))),
        ):
            at = clock.now()
            scratch.record_session(RecordSession("acme", sid, session, Channel.CHAT, at, at, lines))
        cmd = ProposeChange(
            "acme",
            sid,
            "switch_reason",
            Operation.SET,
            TextValue("delivery delays"),
            Origin.STATED,
            Actor(ActorKind.MODEL, "m"),
            0,
            evidence=Evidence("chat-1", 1, "delivery delays"),
        )
        scratch.propose_change(cmd)
        scratch.approve_change(ApproveChange("acme", sid, cmd.change_id, "rev"))
        with Ledger(store.env, keys=keys, clock=ManualClock()) as durable:
            durable.recorder.insert_events(older_log(scratch))
    finally:
        scratch.close()
    return sid


def _readable(ledger: Ledger) -> str:
    events = [
        ledger.mapper.to_domain_event(n).__dict__
        for n in ledger.recorder.select_notifications(1, 1000)
    ]
    return json.dumps(events, default=str)


def _sessions(ledger: Ledger, sid: UUID) -> dict[str, SessionRecorded]:
    return {e.session_id: e for e in ledger.events.get(sid) if isinstance(e, SessionRecorded)}


def _forget(sid: UUID) -> ForgetField:
    return ForgetField("acme", sid, "switch_reason", STAFF, "the lead asked")


def _assert_rotated(ledger: Ledger, sid: UUID) -> None:
    readable = _readable(ledger)
    assert FORGOTTEN not in readable
    for kept in (KEPT, OTHER, "Why switch?"):
        assert kept in readable
    sessions = _sessions(ledger, sid)
    assert sessions["chat-1"].transcript[1]["forgotten"] is True
    assert sessions["chat-1"].transcript[1]["text"] is None
    assert sessions["chat-1"].transcript[0]["text"] == "Why switch?"
    assert [m["text"] for m in sessions["chat-2"].transcript] == [KEPT, OTHER]
    subject = ledger.subject("acme", sid)
    assert subject.external_ref == "lead-31"
    assert subject.sessions["chat-2"].messages[0][1] == KEPT
    (forget,) = [e for e in ledger.events.get(sid) if isinstance(e, FactForgotten)]
    assert forget.reason == "the lead asked"  # sealed under the old key, sealed again
    # The old transcript's key itself is gone.
    stored = next(s for s in ledger.recorder.select_events(sid) if s.topic == SessionRecorded.TOPIC)
    sealed = ledger.mapper.stored_state(stored)["transcript"]  # type: ignore[attr-defined]
    assert isinstance(sealed, str)
    assert sealed.startswith(PREFIX)
    key_id = sealed[len(PREFIX) :].partition(":")[0]
    assert ledger.keys.key(key_id) is None


def test_forgetting_a_field_stated_in_an_old_session_rotates_the_subject_key(
    ledger_store: LedgerStore,
) -> None:
    sid = _older_subject(ledger_store, ledger_store.keys)
    with Ledger(ledger_store.env, keys=ledger_store.keys, clock=ManualClock()) as ledger:
        assert FORGOTTEN in _readable(ledger)  # readable before: the canary can fail
        ledger.forget_field(_forget(sid))
        lines = ledger.forgotten_lines(sid, field="switch_reason", memory_id=None)
        assert ("chat-1", 1) in lines
        assert ledger.lines_not_erased(sid, lines) == []
        assert any(isinstance(e, SubjectKeyRotated) for e in ledger.events.get(sid))
        _assert_rotated(ledger, sid)
    # A new process (no cache, keys read afresh) reads the same.
    with Ledger(ledger_store.env, keys=ledger_store.keys, clock=ManualClock()) as ledger:
        _assert_rotated(ledger, sid)
        # Written after the rotation: sealed under the subject's new key, readable.
        ledger.erase_subject(EraseSubject("acme", sid, STAFF, "erasure asked"))
        readable = _readable(ledger)
        # (The reference an older ledger stored in clear stays: nothing rewrites it.)
        for words in (KEPT, OTHER, "Why switch?", "the lead asked"):
            assert words not in readable


class FailingPrefixDeletion(DelegatingKeyStore):
    def __init__(self, inner: KeyStore) -> None:
        super().__init__(inner)
        self.armed = False

    def forget_prefix(self, prefix: str) -> int:
        if self.armed:
            raise KeyStoreUnavailableError("key store away")
        return self.inner.forget_prefix(prefix)

    def forget_many(self, scopes: Collection[str]) -> int:
        return self.inner.forget_many(scopes)


def test_a_rotation_interrupted_before_its_key_deletion_is_finished_by_the_pass(
    ledger_store: LedgerStore,
) -> None:
    keys = FailingPrefixDeletion(ledger_store.keys)
    sid = _older_subject(ledger_store, ledger_store.keys)
    with Ledger(ledger_store.env, keys=keys, clock=ManualClock()) as ledger:
        keys.armed = True
        with pytest.raises(KeyStoreUnavailableError):
            ledger.forget_field(_forget(sid))
        keys.armed = False
        assert any(isinstance(e, SubjectKeyRotated) for e in ledger.events.get(sid))
        ledger.mapper.forget_cached()  # type: ignore[attr-defined]
        assert FORGOTTEN in _readable(ledger)  # the retired key is still there
        ledger.finish_forgetting()
        _assert_rotated(ledger, sid)


class RotatesAfterHandingOutTheKey(DelegatingKeyStore):
    """Hands out the subject's key, then, before the caller can use it, runs `meanwhile` once:
    a save that fetched the key about to be retired and stores its event after the rotation."""

    def __init__(self, inner: KeyStore, scope: str) -> None:
        super().__init__(inner)
        self.scope = scope
        self.meanwhile: Callable[[], None] | None = None

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        found = self.inner.current_many(scopes)
        hook = self.meanwhile
        if hook is not None and self.scope in scopes:
            self.meanwhile = None
            hook()
        return found


def test_a_save_sealed_under_the_key_being_retired_is_redone_under_the_next(
    ledger_store: LedgerStore,
) -> None:
    sid = _older_subject(ledger_store, ledger_store.keys)
    keys = RotatesAfterHandingOutTheKey(ledger_store.keys, subject_scope(sid))
    with Ledger(ledger_store.env, keys=keys, clock=ManualClock()) as ledger:
        pending = ProposeChange(
            "acme",
            sid,
            "budget",
            Operation.SET,
            TextValue("9k"),
            Origin.INFERRED,
            Actor(ActorKind.MODEL, "m"),
            ledger.subject("acme", sid).profile_version,
        )
        ledger.propose_change(pending)
        # The rejection fetches the subject's key (to seal its reason); the forget, with the
        # rotation it starts, runs before the rejection's event is stored.
        keys.meanwhile = lambda: ledger.forget_field(_forget(sid))
        reason = "Rejected: the Harrowgate estimate was a guess"
        ledger.reject_change(RejectChange("acme", sid, pending.change_id, STAFF, reason))
        assert keys.meanwhile is None  # the rotation ran inside the window
    with Ledger(ledger_store.env, keys=ledger_store.keys, clock=ManualClock()) as ledger:
        _assert_rotated(ledger, sid)
        assert reason in _readable(ledger)  # redone under the subject's new key, readable
