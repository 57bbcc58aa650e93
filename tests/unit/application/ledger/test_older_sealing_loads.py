"""Events stored before per-line keys still load: a transcript sealed whole under the subject's
key, a reference, a fingerprint and reasons in clear. Nothing is rewritten: they read as they
were written, a field forget leaves their words (only an erasure takes them), and an erasure
makes the whole transcript unreadable."""

from __future__ import annotations

from uuid import UUID

from support.older_sealing import older_log

from factledger.adapters.in_memory.event_store import popo_env
from factledger.application.ledger.cipher import PREFIX
from factledger.application.ledger.commands import EraseSubject, ForgetField
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import SessionRecorded, SubjectRegistered
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock

from .test_ledger_forget import story

STAFF = Actor(ActorKind.STAFF, "reviewer-1")


def test_an_older_transcript_reference_and_fingerprint_still_read(ledger: Ledger) -> None:
    story(ledger)
    older = older_log(ledger)
    sessions = [s for s in older if s.topic == SessionRecorded.TOPIC]
    assert sessions[0].state.count(PREFIX.encode()) == 1  # the whole transcript, once
    decoded = [ledger.mapper.to_domain_event(s) for s in older]
    registered = next(e for e in decoded if isinstance(e, SubjectRegistered))
    recorded = next(e for e in decoded if isinstance(e, SessionRecorded))
    assert registered.external_ref == "lead-7"
    assert [m["text"] for m in recorded.transcript] == [
        "Why did you switch?",
        "Their delivery delays were hurting us.",
    ]
    assert len(recorded.fingerprint) == 64


def test_an_erasure_makes_an_older_transcript_unreadable(ledger: Ledger) -> None:
    subject_id: UUID = story(ledger).subject_id
    older = older_log(ledger)
    ledger.erase_subject(EraseSubject("acme", subject_id, STAFF, "asked"))
    ledger.mapper.forget_cached()  # type: ignore[attr-defined]
    recorded = next(
        e
        for e in (ledger.mapper.to_domain_event(s) for s in older)
        if isinstance(e, SessionRecorded)
    )
    assert recorded.transcript is None


def _older_ledger(ledger: Ledger, clock: ManualClock) -> Ledger:
    """Another ledger over the same keys whose log is `ledger`'s, written the older way."""
    older = Ledger(popo_env(), clock=clock, keys=ledger.keys)
    older.recorder.insert_events(older_log(ledger))
    return older


def test_a_field_forget_erases_the_older_lines_by_rotating_the_subject_key(
    ledger: Ledger, clock: ManualClock
) -> None:
    subject_id: UUID = story(ledger).subject_id
    older = _older_ledger(ledger, clock)
    try:
        older.forget_field(ForgetField("acme", subject_id, "switch_reason", STAFF, "asked"))
        lines = older.forgotten_lines(subject_id, field="switch_reason", memory_id=None)
        assert ("chat-1", 1) in lines
        # The line stated the field and its session was sealed whole: the subject's key was
        # rotated, so the line is gone and the ledger names nothing it could not erase.
        assert older.lines_not_erased(subject_id, lines) == []
        older.mapper.forget_cached()  # type: ignore[attr-defined]
        recorded = next(e for e in older.events.get(subject_id) if isinstance(e, SessionRecorded))
        assert recorded.transcript is not None
        assert recorded.transcript[1]["text"] is None
        assert recorded.transcript[0]["text"] == "Why did you switch?"
        # An erasure takes the rest.
        older.erase_subject(EraseSubject("acme", subject_id, STAFF, "asked"))
        older.mapper.forget_cached()  # type: ignore[attr-defined]
        recorded = next(e for e in older.events.get(subject_id) if isinstance(e, SessionRecorded))
        assert [m["text"] for m in recorded.transcript] == [None, None]
    finally:
        older.close()


def test_a_field_forget_on_lines_with_their_own_keys_names_none(ledger: Ledger) -> None:
    subject_id: UUID = story(ledger).subject_id
    ledger.forget_field(ForgetField("acme", subject_id, "switch_reason", STAFF, "asked"))
    lines = ledger.forgotten_lines(subject_id, field="switch_reason", memory_id=None)
    assert ("chat-1", 1) in lines
    assert ledger.lines_not_erased(subject_id, lines) == []
