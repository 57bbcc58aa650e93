"""`RoutedReads`: the ledger's history reads go to the standby only inside a request the API
let read there, fall back to the primary when the standby fails (and rest it meanwhile), and
writes always go to the primary. The two recorders are the library's in-memory ones; the
real pair is in `tests/e2e/test_standby_reads.py`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import uuid4

import pytest
from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.popo import POPOApplicationRecorder

from factledger.adapters.postgres.standby_ledger import RoutedReads
from factledger.adapters.read_routing import reading_from_standby, wrote_on_primary
from factledger.application.ledger.event_store_errors import EventStoreUnavailableError

TOPIC = "factledger.subject.registered.v1"


def stored(count: int) -> list[StoredEvent]:
    subject = uuid4()
    return [StoredEvent(subject, v, TOPIC, b"{}") for v in range(1, count + 1)]


class FailingStandby(POPOApplicationRecorder):
    """A standby that does not answer (counts the attempts)."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    def select_notifications(self, *args: Any, **kwargs: Any) -> Sequence[Notification]:
        self.attempts += 1
        raise EventStoreUnavailableError("event store failed")


@pytest.fixture
def pair() -> tuple[POPOApplicationRecorder, POPOApplicationRecorder, RoutedReads]:
    primary, standby = POPOApplicationRecorder(), POPOApplicationRecorder()
    primary.insert_events(stored(3))
    standby.insert_events(stored(1))  # behind: one replayed of three
    return primary, standby, RoutedReads(primary, standby)


def test_reads_outside_a_request_the_api_routed_go_to_the_primary(
    pair: tuple[POPOApplicationRecorder, POPOApplicationRecorder, RoutedReads],
) -> None:
    _, _, routed = pair
    assert routed.max_notification_id() == 3
    with reading_from_standby(False):
        assert len(routed.select_notifications(0, 10)) == 3


def test_a_request_allowed_to_reads_the_standby_until_it_writes(
    pair: tuple[POPOApplicationRecorder, POPOApplicationRecorder, RoutedReads],
) -> None:
    _, _, routed = pair
    with reading_from_standby(True):
        assert routed.max_notification_id() == 1
        assert len(routed.select_notifications(0, 10)) == 1
        wrote_on_primary()
        assert routed.max_notification_id() == 3


def test_a_subjects_events_follow_the_same_route(
    pair: tuple[POPOApplicationRecorder, POPOApplicationRecorder, RoutedReads],
) -> None:
    primary, _, routed = pair
    subject = primary.select_notifications(3, 1)[0].originator_id
    with reading_from_standby(True):
        assert routed.select_events(subject) == []  # not replayed yet
    assert len(routed.select_events(subject, lte=1)) == 1


def test_a_failing_standby_falls_back_to_the_primary_and_rests() -> None:
    primary, standby = POPOApplicationRecorder(), FailingStandby()
    primary.insert_events(stored(2))
    routed = RoutedReads(primary, standby)
    with reading_from_standby(True):
        assert [n.id for n in routed.select_notifications(0, 10)] == [1, 2]
        assert routed.standby_resting()
        assert [n.id for n in routed.select_notifications(1, 10, inclusive_of_start=False)] == [2]
    assert standby.attempts == 1  # the second read did not try it again


def test_writes_go_to_the_primary(
    pair: tuple[POPOApplicationRecorder, POPOApplicationRecorder, RoutedReads],
) -> None:
    primary, standby, routed = pair
    with reading_from_standby(True):
        routed.insert_events(stored(1))
    assert primary.max_notification_id() == 4
    assert standby.max_notification_id() == 1
