"""Events as the ledger stored them before per-line keys: the transcript one ciphertext under
the subject's key, the reference, fingerprint and reasons in clear. For tests of old ledgers."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Mapper, StoredEvent

from factledger.application.ledger.cipher import ShreddingMapper, _aad, _encrypt, subject_scope
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import SessionRecorded
from factledger.domain.sessions import BEFORE_KEYS, SessionRecord, transcript_from_payload
from factledger.domain.transcript import Channel


def unkeyed_fingerprint(event: SessionRecorded) -> str:
    """The session's fingerprint as sessions were fingerprinted before keyed fingerprints:
    a plain SHA-256 of its words (what a guesser could compute)."""
    return SessionRecord(
        event.session_id,
        Channel(event.channel),
        event.started_at,
        event.ended_at,
        transcript_from_payload(event.transcript),
        event.summary,
        event.withheld_count,
        event.conversation_type,
    ).fingerprint(BEFORE_KEYS)


def as_before(ledger: Ledger, stored: StoredEvent) -> StoredEvent:
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
        state["fingerprint"] = unkeyed_fingerprint(event)
    older = object.__new__(type(event))
    object.__setattr__(older, "__dict__", state)
    return Mapper.to_stored_event(mapper, older)  # the library's own: nothing sealed


def older_log(ledger: Ledger) -> list[StoredEvent]:
    return [as_before(ledger, s) for s in ledger.recorder.select_notifications(1, 100)]
