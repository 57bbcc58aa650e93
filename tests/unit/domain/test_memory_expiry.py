"""A memory's expiry is an event of the subject: recorded once per time, with a time zone, and
never on an erased subject."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from factledger.domain.errors import InvalidOperationError, SubjectErasedError
from factledger.domain.events import MemoryExpirySet
from factledger.domain.proposal import Decision
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.subject import Subject
from factledger.testing.subject_builders import T0

BY = Decision(by=Actor(ActorKind.STAFF, "ops-1"))
UNTIL = T0 + timedelta(days=30)


def test_an_expiry_is_recorded_once_per_time(subject: Subject) -> None:
    subject.expire_memory("mem-1", UNTIL, by=BY, at=T0)
    subject.expire_memory("mem-1", UNTIL, by=BY, at=T0)
    subject.expire_memory("mem-1", UNTIL + timedelta(days=1), by=BY, at=T0)

    events = [e for e in subject.collect_events() if isinstance(e, MemoryExpirySet)]
    assert [(e.memory_id, e.valid_until) for e in events] == [
        ("mem-1", UNTIL),
        ("mem-1", UNTIL + timedelta(days=1)),
    ]
    assert subject.memory_expiries == {"mem-1": UNTIL + timedelta(days=1)}


def test_an_expiry_needs_a_time_zone(subject: Subject) -> None:
    with pytest.raises(InvalidOperationError):
        subject.expire_memory("mem-1", datetime(2026, 6, 1), by=BY, at=T0)


def test_an_erased_subject_takes_no_expiry(subject: Subject) -> None:
    subject.erase(by=BY, reason="asked", at=T0)
    with pytest.raises(SubjectErasedError):
        subject.expire_memory("mem-1", UNTIL, by=BY, at=T0)
