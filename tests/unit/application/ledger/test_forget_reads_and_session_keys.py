"""What the ledger reads for the steps keyed fingerprints and per-forget rotations added: a
subject whose every line is sealed alone is found so once per process, after which a forget
and `lines_not_erased` read nothing more of its stream for old lines; a new session's keys
are created in the same key-store call as its fingerprint key, so the save only reads them.
On POPO and SQLite (the conftest's stores)."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import pytest

from factledger.application.ledger.cipher import fingerprint_scope, line_scope, summary_scope
from factledger.application.ledger.commands import ForgetMemory, RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.lines_alone import LinesAlone
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

STAFF = Actor(ActorKind.STAFF, "rev")
LINES = (Message(Role.AGENT, "What do you spend?"), Message(Role.SUBJECT, "About 40k a year."))


def recorded(ledger: Ledger, clock: ManualClock, *session_ids: str) -> UUID:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-31")).subject_id
    at = clock.now()
    for session_id in session_ids:
        ledger.record_session(RecordSession("acme", sid, session_id, Channel.CHAT, at, at, LINES))
    return sid


def forget(ledger: Ledger, sid: UUID, session_id: str) -> None:
    ledger.forget_memory(
        ForgetMemory("acme", sid, f"memory-{session_id}", STAFF, "asked by the lead",
                     evidence_refs=((session_id, 1),))
    )  # fmt: skip


def stream_reads(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> list[UUID]:
    """The subject ids each raw read of a stream asks for, from now on."""
    reads: list[UUID] = []
    select = ledger.recorder.select_events

    def counting(originator_id: UUID, *args: object, **kwargs: object) -> object:
        reads.append(originator_id)
        return select(originator_id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ledger.recorder, "select_events", counting)
    return reads


def test_a_forget_of_a_subject_with_every_line_alone_reads_no_stream_for_old_lines(
    ledger: Ledger, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = recorded(ledger, clock, "s1", "s2", "s3")
    forget(ledger, sid, "s1")
    assert ledger.lines_alone.known(sid) is True
    reads = stream_reads(ledger, monkeypatch)

    forget(ledger, sid, "s2")
    known_reads = len(reads)
    ledger.lines_alone = LinesAlone()  # as a process that has not looked yet
    forget(ledger, sid, "s3")

    # Not knowing costs the one read that finds it out; knowing costs none.
    assert len(reads) - known_reads == known_reads + 1
    assert ledger.lines_not_erased(sid, [("s3", 1)]) == []
    assert len(reads) - known_reads == known_reads + 1  # answered without a read


def test_lines_not_erased_finds_out_and_keeps_it(
    ledger: Ledger, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = recorded(ledger, clock, "s1")
    assert ledger.lines_alone.known(sid) is None
    reads = stream_reads(ledger, monkeypatch)
    assert ledger.lines_not_erased(sid, [("s1", 1)]) == []
    assert ledger.lines_not_erased(sid, [("s1", 0)]) == []
    assert reads == [sid]
    assert ledger.lines_alone.known(sid) is True


class KeyCalls:
    """The scopes each key-store call created (it had no live key for them before)."""

    def __init__(self, ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
        self.created: list[set[str]] = []
        keys = ledger.keys
        many = keys.current_many

        def current_many(scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
            new = {s for s in scopes if keys.live(s) is None}
            found = many(scopes)
            if new:
                self.created.append(new)
            return found

        monkeypatch.setattr(keys, "current_many", current_many)
        monkeypatch.setattr(keys, "current", lambda scope: current_many([scope])[scope])


def test_a_new_sessions_keys_are_created_in_one_call_with_its_fingerprint_key(
    ledger: Ledger, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = recorded(ledger, clock)
    calls = KeyCalls(ledger, monkeypatch)
    at = clock.now()
    ledger.record_session(RecordSession("acme", sid, "s1", Channel.CHAT, at, at, LINES))
    assert calls.created == [
        {
            fingerprint_scope(sid),
            summary_scope(sid, "s1"),
            line_scope(sid, "s1", 0),
            line_scope(sid, "s1", 1),
        }
    ]
    # A later session: its own keys, the fingerprint key already there; still one call.
    ledger.record_session(RecordSession("acme", sid, "s2", Channel.CHAT, at, at, LINES))
    assert calls.created[1:] == [
        {summary_scope(sid, "s2"), line_scope(sid, "s2", 0), line_scope(sid, "s2", 1)}
    ]
    # A retry creates nothing.
    ledger.record_session(RecordSession("acme", sid, "s2", Channel.CHAT, at, at, LINES))
    assert len(calls.created) == 2
