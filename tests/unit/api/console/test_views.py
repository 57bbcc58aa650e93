"""What the console's subject pages assemble: the evidence in context."""

from __future__ import annotations

from datetime import UTC, datetime

from factledger.api.console.subject_view import evidence_context
from factledger.domain.provenance import Evidence
from factledger.domain.sessions import SessionRecord
from factledger.domain.subject import Subject, keyed_subject_id
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.subject_builders import FINGERPRINT_KEY

KEY = b"k" * 32  # a deployment key of subject ids

AT = datetime(2026, 1, 12, 10, tzinfo=UTC)
LINES = [
    (Role.AGENT, f"question {n}") if n % 2 == 0 else (Role.SUBJECT, f"answer {n}.")
    for n in range(10)
]


def _subject() -> Subject:
    subject = Subject.register(
        "acme",
        "lead",
        "lead-1",
        at=AT,
        subject_id=keyed_subject_id("acme", "lead", "lead-1", 0, KEY),
    )
    transcript = tuple(Message(role, text, AT) for role, text in LINES)
    subject.record_session(
        SessionRecord("s-1", Channel.CHAT, AT, AT, transcript),
        at=AT,
        fingerprint_key=FINGERPRINT_KEY,
    )
    return subject


def test_the_quote_is_split_out_of_its_message_among_its_neighbours() -> None:
    lines = evidence_context(_subject(), Evidence("s-1", 5, "answer 5"))
    assert [line.index for line in lines] == [2, 3, 4, 5, 6, 7, 8]
    quoted = [line for line in lines if line.is_evidence]
    assert [(q.before, q.quote, q.after) for q in quoted] == [("", "answer 5", ".")]


def test_a_quote_that_no_longer_matches_marks_the_whole_message() -> None:
    lines = evidence_context(_subject(), Evidence("s-1", 1, "something else"))
    assert [(line.quote, line.before) for line in lines if line.is_evidence] == [("answer 1.", "")]


def test_no_session_no_context() -> None:
    assert evidence_context(_subject(), Evidence("unknown", 0, "x")) == ()
    assert evidence_context(_subject(), None) == ()
