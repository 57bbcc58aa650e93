"""`read_in_place`: recall's turn reads the cached subject without the library's copy, brought
up to date first, and never while another thread is bringing it forward (ADR 0102)."""

from __future__ import annotations

import threading
from uuid import uuid4

import pytest
from eventsourcing.application import AggregateNotFoundError

from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.in_place import read_in_place
from factledger.application.ledger.ledger import Ledger
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock


def test_the_subject_is_read_where_the_cache_holds_it_and_up_to_date(
    ledger: Ledger, clock: ManualClock
) -> None:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-1")).subject_id
    read_in_place(ledger.repository, sid, lambda s: s)
    at = clock.now()
    said = (Message(Role.SUBJECT, "Hello"),)
    ledger.record_session(RecordSession("acme", sid, "call-1", Channel.CHAT, at, at, said))

    read = read_in_place(ledger.repository, sid, lambda s: s)

    assert read is ledger.repository.cache.get(sid)  # the cached subject itself, no copy
    assert read.version == ledger.subject("acme", sid).version
    assert "call-1" in read.sessions


def test_an_unknown_subject_is_not_found(ledger: Ledger) -> None:
    with pytest.raises(AggregateNotFoundError):
        read_in_place(ledger.repository, uuid4(), lambda s: s)


def test_a_read_waits_while_another_thread_brings_the_subject_forward(ledger: Ledger) -> None:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-1")).subject_id
    read_in_place(ledger.repository, sid, lambda s: s)  # cached
    lock = ledger.repository._use_fastforward_lock(sid)
    read: list[int] = []

    def reader(subject: Subject) -> None:
        read.append(subject.version)

    with lock:
        thread = threading.Thread(target=read_in_place, args=(ledger.repository, sid, reader))
        thread.start()
        thread.join(timeout=0.2)
        assert read == []  # held back by the lock a fast-forward holds
    thread.join(timeout=5)
    ledger.repository._disuse_fastforward_lock(sid)

    assert read == [ledger.subject("acme", sid).version]
