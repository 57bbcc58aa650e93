"""The review queue's indexed store, on SQLite and on PostgreSQL: what a live follower built
equals what a replay of the log builds after a drop; every filter counts over all rows (not a
first batch of them); decisions, supersessions and erasures take rows out."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from support.api_harness import build_ports
from support.queue_seed import item_row, seed_many

from factledger.adapters.postgres.queue_store import PostgresQueueStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.api.bootstrap.runtime import Runtime
from factledger.application.ledger.commands import EraseSubject, RejectChange
from factledger.application.review_queue.ports import QueueStore, SubjectRow
from factledger.application.review_queue.queue import QueueCursor, QueueFilter
from factledger.domain.provenance import Actor, ActorKind
from factledger.projections.follower import Follower
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.testing.manual_clock import ManualClock

STAFF = Actor(ActorKind.STAFF, "staff-1")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[QueueStore]:
    if request.param == "sqlite":
        made: QueueStore = SqliteQueueStore(":memory:")
    else:
        location: PostgresLocation = request.getfixturevalue("postgres")
        made = PostgresQueueStore(location.conninfo, schema=f"rq_{secrets.token_hex(4)}")
    try:
        yield made
    finally:
        made.close()


def everything(store: QueueStore, tenant: str = "t1") -> list[tuple[int, str, str | None]]:
    rows, cursor = [], QueueCursor()
    while True:
        page = store.page(tenant, QueueFilter(), cursor, 50)
        rows.extend((r.position, r.change_id, r.said_at) for r in page.rows)
        if page.next_cursor is None:
            return rows
        cursor = page.next_cursor


def followed(store: QueueStore) -> tuple[Runtime, ReviewQueueProjection]:
    clock = ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))
    ports = build_ports(clock)
    projection = ReviewQueueProjection(store)
    seed_many(ports, clock, n=12)
    return ports, projection


def test_a_replay_after_a_drop_rebuilds_what_the_follower_built(store: QueueStore) -> None:
    ports, projection = followed(store)
    ledger = ports.ledger
    first = ports.ledger.subject_id_for("t1", "lead", "crm-0000")
    second = ports.ledger.subject_id_for("t1", "customer", "crm-0001")
    changes = list(ledger.subject("t1", first).changes)
    ledger.reject_change(RejectChange("t1", first, changes[0], STAFF, "not said"))
    ledger.erase_subject(EraseSubject("t1", second, STAFF, "asked to be erased"))
    Follower(ledger, [projection]).catch_up()
    live = everything(store)
    assert len(live) == 26 - 1 - 2  # 12 x 2 + two budgets, less a rejection and an erasure
    assert all(r[1] != str(changes[0]) for r in live)

    projection.rebuild(ledger)
    assert everything(store) == live
    assert store.position() == projection.position() > 0


def test_a_filter_counts_every_row_not_a_first_batch(store: QueueStore) -> None:
    with store.transaction() as txn:
        for n in range(1, 2_501):
            txn.add(item_row(n, "rare" if n % 1_000 == 0 or n > 2_495 else "common"))
        txn.advance(2_500)
    rare = store.page("t1", QueueFilter(field="rare"), QueueCursor(), 3)
    assert rare.total == 7  # 1000, 2000 and 2496..2500
    assert [r.position for r in rare.rows] == [1_000, 2_000, 2_496]
    assert rare.next_cursor is not None
    rest = store.page("t1", QueueFilter(field="rare"), rare.next_cursor, 3)
    assert [r.position for r in rest.rows] == [2_497, 2_498, 2_499]
    back = store.page("t1", QueueFilter(field="rare"), rest.previous_cursor or QueueCursor(), 3)
    assert [r.position for r in back.rows] == [1_000, 2_000, 2_496]
    groups = store.groups("t1", QueueFilter(), offset=0, limit=10)
    assert [(g.key, g.count) for g in groups.groups] == [("h", 2_493), ("g", 7)]
    assert store.choices("t1").field == ["common", "rare"]
    assert store.page("t2", QueueFilter(), QueueCursor(), 3).total == 0
    up_to = store.select("t1", QueueFilter(field="rare", up_to=2_000), limit=10)
    assert [s.position for s in up_to] == [1_000, 2_000]


def test_the_text_search_finds_subjects_by_reference_and_rows_by_field_name(
    store: QueueStore,
) -> None:
    with store.transaction() as txn:
        for n, (ref, field) in enumerate(
            [
                ("CRM-Ärzte-01", "supplier"),
                ("crm-ärzte-02", "budget"),
                ("crm-0003", "Ärztekammer"),
                ("crm-0004", "budget"),
            ],
            start=1,
        ):
            txn.put_subject(SubjectRow(f"s-{n}", "t1", "lead", ref))
            txn.add(replace(item_row(n, field), external_ref=ref))
        txn.put_subject(SubjectRow("s-9", "t2", "lead", "crm-ärzte-09"))
        txn.add(replace(item_row(9, "budget"), tenant="t2", subject_id="s-9", external_ref="x"))
        txn.advance(9)

    def found(text: str) -> list[int]:
        return [
            r.position for r in store.page("t1", QueueFilter(text=text), QueueCursor(), 10).rows
        ]

    assert found("ÄRZTE") == [1, 2, 3]  # references and a field name, whatever the case
    assert found("rzte-0") == [1, 2]
    assert found("BUDG") == [2, 4]
    assert found("crm-0004") == [4]
    assert found("%") == []
    assert store.page("t1", QueueFilter(text="ärzte", field="budget"), QueueCursor(), 10).total == 1


def test_the_filters_choices_follow_the_queue(store: QueueStore) -> None:
    with store.transaction() as txn:
        txn.add(item_row(1, "budget"))
        txn.advance(1)
    assert store.choices("t1").field == ["budget"]
    with store.transaction() as txn:
        txn.add(item_row(2, "supplier"))
        txn.advance(2)
    assert store.choices("t1").field == ["budget", "supplier"]
    with store.transaction() as txn:
        txn.remove("s-1", "c-1")
        txn.advance(3)
    assert store.choices("t1").field == ["supplier"]
