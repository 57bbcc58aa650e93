"""A registration read back after its subject's erasure carries no reference (it was shredded
with the subject's key). Views that replay the log meet it before the erasure that follows it
(a rebuild under way, a follower behind): they treat the subject as erased already."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

import pytest
from support.approvals import TENANT, proposed

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import EraseSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.review_queue.queue import QueueCursor, QueueFilter
from factledger.domain.events import SubjectErased, SubjectRegistered
from factledger.domain.provenance import Actor, ActorKind
from factledger.projections.follower import Tracked, read_events
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.testing.manual_clock import ManualClock

STAFF = Actor(ActorKind.STAFF, "rev-1")


@dataclass
class Log:
    events: list[Tracked]
    erased: UUID
    kept: UUID

    def before_the_erasure(self) -> list[Tracked]:
        at = next(i for i, t in enumerate(self.events) if isinstance(t.event, SubjectErased))
        return self.events[:at]


@pytest.fixture
def log() -> Iterator[Log]:
    clock = ManualClock(datetime(2026, 1, 10, 9, tzinfo=UTC))
    settings = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    with Ledger(settings, clock=clock, keys=InMemoryKeyStore()) as ledger:
        (erased, _), (kept, _) = proposed(ledger, "lead-1"), proposed(ledger, "lead-2")
        ledger.erase_subject(EraseSubject(TENANT, erased, STAFF, "asked to be erased"))
        yield Log(read_events(ledger, after=0), erased, kept)


def test_the_registration_reads_back_without_its_reference(log: Log) -> None:
    registered = {
        t.event.originator_id: t.event.external_ref
        for t in log.events
        if isinstance(t.event, SubjectRegistered)
    }
    assert registered == {log.erased: None, log.kept: "lead-2"}


def test_the_profile_reader_answers_not_found_before_the_views_reach_the_erasure(
    log: Log,
) -> None:
    projection = ProfileProjection(InMemoryViewStore("profile"))
    projection.process(log.before_the_erasure())
    reader = ViewStoreProfileReader(projection.store)
    with pytest.raises(NotFoundError):
        reader.subject(TENANT, log.erased)
    assert [s.subject_id for s in reader.subjects(TENANT)] == [log.kept]
    assert reader.subject(TENANT, log.kept).external_ref == "lead-2"

    projection.process(log.events[len(log.before_the_erasure()) :])
    with pytest.raises(NotFoundError):
        reader.subject(TENANT, log.erased)
    assert [s.subject_id for s in reader.subjects(TENANT)] == [log.kept]


def test_the_review_queue_never_takes_the_erased_subject_in(log: Log) -> None:
    store = SqliteQueueStore(":memory:")
    try:
        projection = ReviewQueueProjection(store)
        projection.process(log.before_the_erasure())
        page = store.page(TENANT, QueueFilter(), QueueCursor(), 50)
        assert [(r.subject_id, r.external_ref) for r in page.rows] == [(str(log.kept), "lead-2")]
        projection.process(log.events[len(log.before_the_erasure()) :])
        assert store.page(TENANT, QueueFilter(), QueueCursor(), 50).rows == page.rows
    finally:
        store.close()
