"""A decision that forgets a field, interrupted between its event and the key deletion, is
finished from the recorded event: by its retry with the same command id, or by the pass over
the recorded forgets. Runs on SQLite's key store here and on PostgreSQL's from
tests/integration/on_postgres."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection
from uuid import UUID

import pytest
from support.key_stores import DelegatingKeyStore

from factledger.application.ledger.commands import (
    ApproveChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.forget_sweep import (
    ForgetSweepOptions,
    finish_forgetting_forever,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStore, KeyStoreUnavailableError
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import ListValue, TextValue
from factledger.testing.ledger_stores import LedgerStore
from factledger.testing.manual_clock import ManualClock

STATED = "Our yearly budget is forty thousand."
ASKS = "Please delete our budget from your records."
KEPT = "How is the evaluation going?"
MODEL = Actor(ActorKind.MODEL, "m")


# Durable stores only (a restart reopens them); PostgreSQL's fixture ignores the parameter.
pytestmark = pytest.mark.parametrize("ledger_store", ["sqlite"], indirect=True)


class FailingWhenArmed(DelegatingKeyStore):
    """Deleting keys fails while armed, as the key store going away right after the event
    committed."""

    def __init__(self, inner: KeyStore) -> None:
        super().__init__(inner)
        self.armed = False
        self.refused = 0

    def forget_many(self, scopes: Collection[str]) -> int:
        if self.armed:
            self.refused += 1
            raise KeyStoreUnavailableError("key store away")
        return self.inner.forget_many(scopes)


def _said(ledger: Ledger, sid: UUID, session_id: str, *lines: tuple[Role, str]) -> None:
    at = ledger.clock.now()
    messages = tuple(Message(role, text) for role, text in lines)
    ledger.record_session(RecordSession("acme", sid, session_id, Channel.CHAT, at, at, messages))


def _propose(
    ledger: Ledger, sid: UUID, operation: Operation, value: str | None, said: Evidence
) -> UUID:
    cmd = ProposeChange(
        "acme",
        sid,
        "budget",
        operation,
        None if value is None else TextValue(value),
        Origin.STATED,
        MODEL,
        ledger.subject("acme", sid).profile_version,
        evidence=said,
    )
    ledger.propose_change(cmd)
    return cmd.change_id


def _asked_to_forget(ledger: Ledger) -> tuple[UUID, UUID]:
    """budget approved from chat-1 #1; a pending request to forget it said in chat-2 #1."""
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-9")).subject_id
    _said(ledger, sid, "chat-1", (Role.AGENT, KEPT), (Role.SUBJECT, STATED))
    value = _propose(ledger, sid, Operation.SET, "40k a year", Evidence("chat-1", 1, "forty"))
    ledger.approve_change(ApproveChange("acme", sid, value, "rev"))
    _said(ledger, sid, "chat-2", (Role.AGENT, "Anything else?"), (Role.SUBJECT, ASKS))
    request = _propose(ledger, sid, Operation.FORGET, None, Evidence("chat-2", 1, "delete"))
    return sid, request


def _everything_readable(ledger: Ledger, sid: UUID) -> str:
    """What every read of the ledger decodes: the event stream from the start (each event as
    the stream serves it), the subject's sessions and its profile."""
    events = [
        ledger.mapper.to_domain_event(n).__dict__
        for n in ledger.recorder.select_notifications(1, 1000)
    ]
    subject = ledger.subject("acme", sid)
    sessions = repr(subject.sessions)  # every line's text, or nothing once forgotten
    return json.dumps([events, sessions, str(subject.fields)], default=str)


def _assert_forgotten(ledger: Ledger, sid: UUID) -> None:
    readable = _everything_readable(ledger, sid)
    for words in (STATED, ASKS, "40k a year", "forty"):
        assert words not in readable
    assert KEPT in readable  # the agent's line stays


def _interrupted_approval(ledger: Ledger, keys: FailingWhenArmed) -> tuple[UUID, ApproveChange]:
    sid, request = _asked_to_forget(ledger)
    approve = ApproveChange("acme", sid, request, "rev", command_id="approve-forget-1")
    keys.armed = True
    with pytest.raises(KeyStoreUnavailableError):
        ledger.approve_change(approve)
    keys.armed = False
    assert "budget" not in ledger.subject("acme", sid).fields  # the event is recorded
    assert STATED in _everything_readable(ledger, sid)  # and the keys survived
    return sid, approve


def _open(store: LedgerStore, keys: KeyStore) -> Ledger:
    return Ledger(store.env, keys=keys, clock=ManualClock())


def test_a_retried_approval_deletes_the_keys_its_first_attempt_left(
    ledger_store: LedgerStore,
) -> None:
    keys = FailingWhenArmed(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid, approve = _interrupted_approval(ledger, keys)
        again = ledger.approve_change(approve)
        assert not again.applied  # the same decision, seen: no second event
        _assert_forgotten(ledger, sid)
    # A restarted process reads the same.
    with _open(ledger_store, ledger_store.keys) as ledger:
        _assert_forgotten(ledger, sid)


def test_the_pass_over_recorded_forgets_finishes_it_after_a_restart(
    ledger_store: LedgerStore,
) -> None:
    keys = FailingWhenArmed(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid, _ = _interrupted_approval(ledger, keys)
    with _open(ledger_store, ledger_store.keys) as ledger:
        assert STATED in _everything_readable(ledger, sid)
        read, following = ledger.finish_forgetting()
        assert read == 1
        _assert_forgotten(ledger, sid)
        # The next pass starts after it and finds nothing.
        assert ledger.finish_forgetting(following) == (0, following)


def test_the_pass_keeps_a_field_written_again_since(ledger_store: LedgerStore) -> None:
    """The new value is sealed under the field key's next generation: the pass deletes the
    forgotten generation and the new words stay."""
    keys = FailingWhenArmed(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid, _ = _interrupted_approval(ledger, keys)
        _said(ledger, sid, "chat-3", (Role.SUBJECT, "Budget is now fifty thousand."))
        newer = _propose(ledger, sid, Operation.SET, "50k a year", Evidence("chat-3", 0, "fifty"))
        ledger.approve_change(ApproveChange("acme", sid, newer, "rev"))
        ledger.finish_forgetting()
        readable = _everything_readable(ledger, sid)
        assert "50k a year" in readable
        assert "40k a year" not in readable
        # The lines the forget named are gone: a line is never sealed again.
        assert STATED not in readable
        assert ASKS not in readable


async def test_the_api_processes_pass_finishes_it_once_the_key_store_answers(
    ledger_store: LedgerStore,
) -> None:
    """The pass every API process runs: while the key store is away it is logged and tried
    again; then the words go within an interval, with no retry of the decision."""
    keys = FailingWhenArmed(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid, _ = _interrupted_approval(ledger, keys)
        keys.armed = True
        stop = asyncio.Event()
        options = ForgetSweepOptions(interval_s=0.01)
        sweeping = asyncio.ensure_future(finish_forgetting_forever(ledger, stop, options))
        try:
            deadline = asyncio.get_running_loop().time() + 10
            while keys.refused < 2:  # a pass failed, and the next one ran all the same
                assert asyncio.get_running_loop().time() < deadline, "no second pass"
                await asyncio.sleep(0.01)
            assert not sweeping.done()
            assert STATED in _everything_readable(ledger, sid)
            keys.armed = False
            while STATED in _everything_readable(ledger, sid):
                assert asyncio.get_running_loop().time() < deadline, "never finished"
                await asyncio.sleep(0.01)
        finally:
            stop.set()
            await sweeping
        _assert_forgotten(ledger, sid)


SPOKE = "My ex and I split up, it still stings."
ASKS_SAID = "Please forget what I told you about my ex."


def _interrupted_said_approval(
    ledger: Ledger, keys: FailingWhenArmed
) -> tuple[UUID, ApproveChange]:
    """A request to forget what was said (ADR 0174) approved while the key store is away."""
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-10")).subject_id
    _said(ledger, sid, "chat-1", (Role.AGENT, KEPT), (Role.SUBJECT, SPOKE))
    _said(ledger, sid, "chat-2", (Role.AGENT, "Anything else?"), (Role.SUBJECT, ASKS_SAID))
    cmd = ProposeChange(
        "acme", sid, SAID_LINES, Operation.FORGET_SAID, ListValue((line_ref("chat-1", 1),)),
        Origin.STATED, MODEL, 0, evidence=Evidence("chat-2", 1, ASKS_SAID),
    )  # fmt: skip
    ledger.propose_change(cmd)
    approve = ApproveChange("acme", sid, cmd.change_id, "rev", command_id="approve-said-1")
    keys.armed = True
    with pytest.raises(KeyStoreUnavailableError):
        ledger.approve_change(approve)
    keys.armed = False
    assert SPOKE in _everything_readable(ledger, sid)  # the event is recorded, the keys survived
    return sid, approve


def _assert_said_forgotten(ledger: Ledger, sid: UUID) -> None:
    readable = _everything_readable(ledger, sid)
    assert SPOKE not in readable
    assert ASKS_SAID not in readable
    assert KEPT in readable


def test_a_retried_approval_of_a_request_about_lines_deletes_their_keys(
    ledger_store: LedgerStore,
) -> None:
    keys = FailingWhenArmed(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid, approve = _interrupted_said_approval(ledger, keys)
        assert not ledger.approve_change(approve).applied
        _assert_said_forgotten(ledger, sid)


def test_the_pass_finishes_a_request_about_lines_after_a_restart(
    ledger_store: LedgerStore,
) -> None:
    keys = FailingWhenArmed(ledger_store.keys)
    with _open(ledger_store, keys) as ledger:
        sid, _ = _interrupted_said_approval(ledger, keys)
    with _open(ledger_store, ledger_store.keys) as ledger:
        assert ledger.finish_forgetting()[0] == 1
        _assert_said_forgotten(ledger, sid)
