"""Events stored before per-line keys still load: a transcript sealed whole under the subject's
key, a reference, a fingerprint and reasons in clear. Nothing is rewritten: they read as they
were written, a field forget leaves their words (only an erasure takes them), and an erasure
makes the whole transcript unreadable."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.persistence import Mapper, StoredEvent

from factledger.application.ledger.cipher import (
    PREFIX,
    ShreddingMapper,
    _aad,
    _encrypt,
    subject_scope,
)
from factledger.application.ledger.commands import EraseSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import SessionRecorded, SubjectRegistered
from factledger.domain.provenance import Actor, ActorKind

from .test_ledger_forget import story

STAFF = Actor(ActorKind.STAFF, "reviewer-1")


def _as_before(ledger: Ledger, stored: StoredEvent) -> StoredEvent:
    """The stored event as the earlier mapper wrote it: the transcript one ciphertext under the
    subject's key, every other field of this change in clear."""
    mapper = ledger.mapper
    assert isinstance(mapper, ShreddingMapper)
    event = mapper.to_domain_event(stored)
    state: dict[str, Any] = dict(vars(event))
    if isinstance(event, SessionRecorded):
        key_id, key = ledger.keys.current(subject_scope(event.originator_id))
        sealed = _encrypt(key_id, key, state["transcript"], _aad(state, type(event), "transcript"))
        state["transcript"] = sealed
    older = object.__new__(type(event))
    object.__setattr__(older, "__dict__", state)
    return Mapper.to_stored_event(mapper, older)  # the library's own: nothing sealed


def _older_log(ledger: Ledger) -> list[StoredEvent]:
    return [_as_before(ledger, s) for s in ledger.recorder.select_notifications(1, 100)]


def test_an_older_transcript_reference_and_fingerprint_still_read(ledger: Ledger) -> None:
    story(ledger)
    older = _older_log(ledger)
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
    older = _older_log(ledger)
    ledger.erase_subject(EraseSubject("acme", subject_id, STAFF, "asked"))
    ledger.mapper.forget_cached()  # type: ignore[attr-defined]
    recorded = next(
        e
        for e in (ledger.mapper.to_domain_event(s) for s in older)
        if isinstance(e, SessionRecorded)
    )
    assert recorded.transcript is None
