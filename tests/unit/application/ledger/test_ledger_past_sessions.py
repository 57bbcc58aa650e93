"""`record_past_sessions`: a run of one subject's imported sessions in one save, each with the
outcome it would have had alone (ADR 0027)."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import pytest

from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import SessionConflictError
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

TENANT = "acme"


def session(
    subject_id: UUID, name: str, clock: ManualClock, days_ago: int, words: str = "talked"
) -> RecordSession:
    at = clock.now() - timedelta(days=days_ago)
    said = (Message(Role.SUBJECT, f"We {words} on {name}.", at),)
    return RecordSession(TENANT, subject_id, name, Channel.CHAT, at, at, said)


def registered(ledger: Ledger) -> UUID:
    return ledger.register_subject(RegisterSubject(TENANT, "lead", "l-1")).subject_id


def test_a_run_is_one_save_with_an_outcome_per_session(ledger: Ledger, clock: ManualClock) -> None:
    subject_id = registered(ledger)
    first = ledger.record_past_sessions([session(subject_id, "s1", clock, 30)])
    version = ledger.subject(TENANT, subject_id).version
    saves: list[int] = []
    ledger.after_commit.append(lambda: saves.append(1))

    outcomes = ledger.record_past_sessions(
        [
            session(subject_id, "s1", clock, 30),  # recorded already: unchanged
            session(subject_id, "s2", clock, 20),
            session(subject_id, "s1", clock, 30, "argued"),  # s1 with other words: refused
            session(subject_id, "s0", clock, 40),  # older than s2: taken in its place in time
            session(subject_id, "s3", clock, 10),
        ]
    )

    assert first == [True]
    assert outcomes[0] is False
    assert outcomes[1] is True
    assert isinstance(outcomes[2], SessionConflictError)
    assert outcomes[3] is True
    assert outcomes[4] is True
    assert saves == [1]
    subject = ledger.subject(TENANT, subject_id)
    assert set(subject.sessions) == {"s0", "s1", "s2", "s3"}
    assert subject.version == version + 3


def test_stop_on_error_leaves_the_sessions_after_a_refused_one_untried(
    ledger: Ledger, clock: ManualClock
) -> None:
    subject_id = registered(ledger)
    outcomes = ledger.record_past_sessions(
        [
            session(subject_id, "s2", clock, 20),
            session(subject_id, "s2", clock, 20, "argued"),
            session(subject_id, "s3", clock, 10),
        ],
        stop_on_error=True,
    )
    assert outcomes[0] is True
    assert isinstance(outcomes[1], SessionConflictError)
    assert outcomes[2] is None
    assert set(ledger.subject(TENANT, subject_id).sessions) == {"s2"}


def test_a_run_names_one_subject(ledger: Ledger, clock: ManualClock) -> None:
    subject_id = registered(ledger)
    other = ledger.register_subject(RegisterSubject(TENANT, "lead", "l-2")).subject_id
    with pytest.raises(ValueError, match="one subject"):
        ledger.record_past_sessions(
            [session(subject_id, "s1", clock, 2), session(other, "s1", clock, 1)]
        )
