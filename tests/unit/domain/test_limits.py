"""The domain's named limits: a value at the limit is taken, one past it is refused by name.

The HTTP schemas import the same constants (see tests/unit/api/test_schema_limits.py); the
checks run on commands, so replaying recorded events never trips over them.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from factledger.domain.errors import (
    InvalidReferenceError,
    InvalidSessionError,
    InvalidValueError,
)
from factledger.domain.proposal import MAX_NOTE, MAX_RATIONALE, Decision
from factledger.domain.provenance import (
    MAX_ACTOR_ID,
    MAX_QUOTE,
    MAX_REASON,
    Actor,
    ActorKind,
    Evidence,
)
from factledger.domain.sessions import MAX_SESSION_ID
from factledger.domain.subject import MAX_REFERENCE, Subject, keyed_subject_id
from factledger.domain.transcript import MAX_MESSAGE_CHARS
from factledger.domain.values import MAX_TEXT, OPEN_SCHEMA, TextValue
from factledger.testing.subject_builders import (
    FINGERPRINT_KEY,
    REVIEWER,
    T0,
    approve,
    proposal,
    session,
)

# A subject message whose quote is exactly MAX_QUOTE characters.
LONG_QUOTE = "q" * MAX_QUOTE


def test_a_message_at_the_limit_is_recorded_and_one_past_it_refused(subject: Subject) -> None:
    assert subject.record_session(
        session("s2", "m" * MAX_MESSAGE_CHARS), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    with pytest.raises(InvalidSessionError, match="characters"):
        subject.record_session(
            session("s3", "m" * (MAX_MESSAGE_CHARS + 1)), at=T0, fingerprint_key=FINGERPRINT_KEY
        )


def test_a_session_id_at_the_limit_is_recorded_and_one_past_it_refused(subject: Subject) -> None:
    assert subject.record_session(
        session("s" * MAX_SESSION_ID), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    with pytest.raises(InvalidSessionError, match="session_id"):
        subject.record_session(
            session("s" * (MAX_SESSION_ID + 1)), at=T0, fingerprint_key=FINGERPRINT_KEY
        )


def test_a_rationale_at_the_limit_is_proposed_and_one_past_it_refused(subject: Subject) -> None:
    at_limit = replace(proposal(), rationale="r" * MAX_RATIONALE)
    assert subject.propose(at_limit, OPEN_SCHEMA, at=T0)
    past = replace(proposal(), rationale="r" * (MAX_RATIONALE + 1))
    with pytest.raises(InvalidValueError, match="rationale"):
        subject.propose(past, OPEN_SCHEMA, at=T0)


def test_a_quote_at_the_limit_is_evidence_and_one_past_it_refused(subject: Subject) -> None:
    subject.record_session(session("s2", LONG_QUOTE + "q"), at=T0, fingerprint_key=FINGERPRINT_KEY)
    assert subject.propose(proposal(evidence=Evidence("s2", 1, LONG_QUOTE)), OPEN_SCHEMA, at=T0)
    past = proposal(evidence=Evidence("s2", 1, LONG_QUOTE + "q"))
    with pytest.raises(InvalidValueError, match="quote"):
        subject.propose(past, OPEN_SCHEMA, at=T0)


def test_a_note_at_the_limit_is_taken_and_one_past_it_refused(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(InvalidValueError, match="note"):
        subject.confirm(change.change_id, Decision(REVIEWER, note="n" * (MAX_NOTE + 1)), at=T0)
    subject.confirm(change.change_id, Decision(REVIEWER, note="n" * MAX_NOTE), at=T0)
    assert subject.changes[change.change_id].note == "n" * MAX_NOTE


@pytest.mark.parametrize("decision", ["reject", "forget_field", "erase"])
def test_a_reason_at_the_limit_is_taken_and_one_past_it_refused(
    subject: Subject, decision: str
) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    if decision == "forget_field":
        approve(subject, change)

    def decide(reason: str) -> None:
        by = Decision(REVIEWER)
        if decision == "reject":
            subject.reject(change.change_id, by=by, reason=reason, at=T0)
        elif decision == "forget_field":
            subject.forget_field(change.field, by=by, reason=reason, at=T0)
        else:
            subject.erase(by=by, reason=reason, at=T0)

    with pytest.raises(InvalidValueError, match="reason"):
        decide("r" * (MAX_REASON + 1))
    decide("r" * MAX_REASON)


def test_a_memory_forget_reason_past_the_limit_is_refused(subject: Subject) -> None:
    by = Decision(REVIEWER)
    with pytest.raises(InvalidValueError, match="reason"):
        subject.forget_memory("mem_1", by=by, reason="r" * (MAX_REASON + 1), at=T0)
    subject.forget_memory("mem_1", by=by, reason="r" * MAX_REASON, at=T0)


def test_references_actors_and_texts_keep_their_named_limits() -> None:
    assert keyed_subject_id("acme", "lead", "r" * MAX_REFERENCE, 0, b"k" * 32)
    with pytest.raises(InvalidReferenceError):
        keyed_subject_id("acme", "lead", "r" * (MAX_REFERENCE + 1), 0, b"k" * 32)
    assert Actor(ActorKind.STAFF, "a" * MAX_ACTOR_ID)
    with pytest.raises(InvalidValueError, match=r"actor\.id"):
        Actor(ActorKind.STAFF, "a" * (MAX_ACTOR_ID + 1))
    assert TextValue("t" * MAX_TEXT)
    with pytest.raises(InvalidValueError):
        TextValue("t" * (MAX_TEXT + 1))
