"""The review queue's counters (the whole queue's count, each single filter's, the groups with
their distinct subjects), on SQLite and on PostgreSQL: after any sequence of the projection's
writes they equal a recount of the rows, and what a drop and replay builds; a migration fills
them for a database whose rows were written before they existed; a replayed batch counts
nothing twice."""

from __future__ import annotations

import itertools
import secrets
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.api_harness import build_ports
from support.queue_seed import item_row, seed_many

from factledger.adapters.postgres.queue_store import PostgresQueueStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.application.ledger.commands import EraseSubject, RejectChange
from factledger.application.review_queue.ports import (
    QueueStore,
    SessionRow,
    SubjectRow,
    time_key,
)
from factledger.application.review_queue.queue import QueueChoices, QueueCursor, QueueFilter
from factledger.domain.provenance import Actor, ActorKind, Origin
from factledger.projections.follower import Follower, Tracked, read_events
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.testing.manual_clock import ManualClock

STAFF = Actor(ActorKind.STAFF, "staff-1")
SUBJECTS = {"s-1": ("t1", "lead"), "s-2": ("t1", "customer"), "s-3": ("t2", "lead")}
# Far past every position: the same filter, counted over the rows instead of read.
ALL_ROWS = 10**9


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


def at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 1, day, hour, tzinfo=UTC)


# Age bounds on day boundaries, inside days with items on both sides, and past every item.
AGES = (at(1), at(2), at(2, 6), at(2, 12), at(3, 18), at(5))
TEXTS = ("s-1", "S-2", "budget", "udg", "s", "e", "zzz", "50%")


def combined(choices: QueueChoices) -> list[QueueFilter]:
    """Filters the single-value counters do not hold: pairs and triples of values, ages,
    text searches, and each combined with the others."""
    found: list[QueueFilter] = []
    for kind, field, origin in itertools.product(
        [None, *choices.kind], [None, *choices.field, "absent"], [None, *Origin]
    ):
        found.append(QueueFilter(kind=kind, field=field, origin=origin))
    for proposer, conversation_type in itertools.product(
        [None, *choices.proposer], [None, *choices.conversation_type]
    ):
        found.append(QueueFilter(proposer=proposer, conversation_type=conversation_type))
        found.append(
            QueueFilter(proposer=proposer, conversation_type=conversation_type, kind="lead")
        )
    ages = [
        *((before, None) for before in AGES),
        *((None, after) for after in AGES),
        (at(3, 18), at(2, 6)),
        (at(2, 12), at(2)),
        (at(2, 12), at(2, 6)),
        (at(2, 6), at(3, 18)),
    ]
    for before, after in ages:
        found.append(QueueFilter(proposed_before=before, proposed_after=after))
        found.append(
            QueueFilter(proposed_before=before, proposed_after=after, origin=Origin.STATED)
        )
    for text in TEXTS:
        found.append(QueueFilter(text=text))
        found.append(QueueFilter(text=text, kind="lead"))
        found.append(QueueFilter(text=text, field="budget", proposed_before=at(2, 12)))
        found.append(QueueFilter(text=text, proposed_after=at(2, 6)))
        found.append(QueueFilter(text=text, conversation_type="sales", origin=Origin.STATED))
    return [f for f in found if not f.is_empty()]


def filters(store: QueueStore, tenant: str) -> list[QueueFilter]:
    """No filter, each single value the tenant's queue holds (and one it does not), and the
    combined filters, ages and text searches."""
    found = [QueueFilter(), QueueFilter(field="absent"), QueueFilter(group="absent")]
    choices = store.choices(tenant)
    found += [QueueFilter(kind=k) for k in choices.kind]
    found += [QueueFilter(field=f) for f in choices.field]
    found += [QueueFilter(proposer=p) for p in choices.proposer]
    found += [QueueFilter(conversation_type=c) for c in choices.conversation_type]
    found += [QueueFilter(origin=o) for o in Origin]
    groups = store.groups(tenant, QueueFilter(up_to=ALL_ROWS), offset=0, limit=1_000).groups
    found += [QueueFilter(group=g.key) for g in groups]
    return found + combined(choices)


def counted(store: QueueStore, tenant: str) -> list[object]:
    """What the counters answer, each beside what a recount of the rows answers."""
    pairs: list[object] = []
    for where in filters(store, tenant):
        kept = store.page(tenant, where, QueueCursor(), 5).total
        recounted = store.page(tenant, replace(where, up_to=ALL_ROWS), QueueCursor(), 5).total
        pairs.append((where, kept, recounted))
    for offset in (0, 2):
        kept_groups = store.groups(tenant, QueueFilter(), offset=offset, limit=3)
        recounted_groups = store.groups(tenant, QueueFilter(up_to=ALL_ROWS), offset=offset, limit=3)
        pairs.append(
            (
                [(g.key, g.count, g.subjects, g.sample.position) for g in kept_groups.groups],
                kept_groups.total,
                kept_groups.last_position,
            )
        )
        pairs.append(
            (
                [(g.key, g.count, g.subjects, g.sample.position) for g in recounted_groups.groups],
                recounted_groups.total,
                recounted_groups.last_position,
            )
        )
    return pairs


def assert_counters_true(store: QueueStore) -> None:
    for tenant in ("t1", "t2"):
        pairs = counted(store, tenant)
        for pair in pairs:
            if isinstance(pair, tuple) and isinstance(pair[0], QueueFilter):
                where, kept, recounted = pair
                assert kept == recounted, where
        groups = [p for p in pairs if not (isinstance(p, tuple) and isinstance(p[0], QueueFilter))]
        assert groups[0] == groups[1]
        assert groups[2] == groups[3]


# -- a sequence of the projection's writes ------------------------------------------------------


@dataclass(frozen=True)
class Add:
    subject: str
    field: str
    origin: str
    proposer: str
    group: str
    session: str | None
    day: int  # of January 2026, when the ledger recorded the proposal
    hour: int


@dataclass(frozen=True)
class Remove:
    subject: str
    change: int  # the n-th change proposed so far (absent ones are a no-op, as in a replay)


@dataclass(frozen=True)
class Session:
    subject: str
    session: str
    conversation_type: str | None


@dataclass(frozen=True)
class Erase:
    subject: str


Op = Add | Remove | Session | Erase
subjects = st.sampled_from(sorted(SUBJECTS))
ops = st.one_of(
    st.builds(
        Add,
        subjects,
        st.sampled_from(["budget", "supplier"]),
        st.sampled_from([o.value for o in Origin]),
        st.sampled_from(["model:m", "agent:a"]),
        st.sampled_from(["g1", "g2", "g3"]),
        st.sampled_from([None, "call-1", "call-2"]),
        st.integers(1, 4),
        st.sampled_from([0, 6, 12, 23]),
    ),
    st.builds(Remove, subjects, st.integers(0, 12)),
    st.builds(
        Session,
        subjects,
        st.sampled_from(["call-1", "call-2"]),
        st.sampled_from([None, "sales", "support"]),
    ),
    st.builds(Erase, subjects),
)


def apply(store: QueueStore, transactions: list[list[Op]]) -> None:
    position = 0
    for batch in transactions:
        with store.transaction() as txn:
            for op in batch:
                position += 1
                match op:
                    case Add():
                        tenant, kind = SUBJECTS[op.subject]
                        if txn.subject(op.subject) is None:
                            txn.put_subject(SubjectRow(op.subject, tenant, kind, op.subject))
                        session = (
                            None if op.session is None else txn.session(op.subject, op.session)
                        )
                        txn.add(
                            replace(
                                item_row(position, op.field),
                                tenant=tenant,
                                subject_id=op.subject,
                                kind=kind,
                                origin=op.origin,
                                proposer=op.proposer,
                                group_key=op.group,
                                proposed_key=time_key(at(op.day, op.hour)),
                                session_id=op.session,
                                conversation_type=None
                                if session is None
                                else session.conversation_type,
                            )
                        )
                    case Remove():
                        txn.remove(op.subject, f"c-{op.change}")
                    case Session():
                        txn.put_session(
                            SessionRow(op.subject, op.session, op.conversation_type, "2026-01-01")
                        )
                    case Erase():
                        txn.erase(op.subject)
            txn.advance(position)


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.lists(ops, min_size=1, max_size=8), min_size=1, max_size=5))
# A subject erased and proposed for again in one transaction: its pending count starts anew.
@example(
    [
        [Add("s-1", "budget", "stated", "agent:a", "g1", None, 1, 0)],
        [Erase("s-1"), Add("s-1", "supplier", "inferred", "model:m", "g2", "call-1", 2, 6)],
    ]
)
# A conversation's type arrives after the proposals quoting it (they move between tuples).
@example(
    [
        [Add("s-2", "budget", "stated", "agent:a", "g1", "call-1", 3, 12)],
        [Session("s-2", "call-1", "sales"), Session("s-2", "call-1", "support")],
    ]
)
def test_the_counters_equal_a_recount_after_any_writes_and_a_replay(
    store: QueueStore, transactions: list[list[Op]]
) -> None:
    store.drop()
    apply(store, transactions)
    assert_counters_true(store)
    before = {t: counted(store, t) for t in ("t1", "t2")}
    store.drop()
    apply(store, transactions)
    assert {t: counted(store, t) for t in ("t1", "t2")} == before


# -- through the projection -------------------------------------------------------------------


def test_the_projections_counters_survive_a_replayed_batch_and_a_rebuild(
    store: QueueStore,
) -> None:
    clock = ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))
    ports = build_ports(clock)
    projection = ReviewQueueProjection(store)
    seeded = seed_many(ports, clock, n=12)
    ledger = ports.ledger
    first, second = seeded.subjects[0], seeded.subjects[1]
    ledger.reject_change(
        RejectChange("t1", first, next(iter(ledger.subject("t1", first).changes)), STAFF, "no")
    )
    ledger.erase_subject(EraseSubject("t1", second, STAFF, "asked to be erased"))
    follower = Follower(ledger, [projection])
    follower.catch_up()
    assert store.page("t1", QueueFilter(), QueueCursor(), 5).total == 26 - 1 - 2
    assert_counters_true(store)
    live = counted(store, "t1")

    # The same events again (a follower that crashed before it knew they were committed).
    batch: list[Tracked] = read_events(ledger, after=0, limit=10_000)
    projection.process(batch)
    assert counted(store, "t1") == live

    projection.rebuild(ledger)
    assert counted(store, "t1") == live


def test_a_migration_fills_the_counters_of_rows_written_before_them(tmp_path: Path) -> None:
    path = tmp_path / "queue.sqlite"
    store = SqliteQueueStore(path)
    with store.transaction() as txn:
        for n in range(1, 40):
            txn.add(
                replace(item_row(n, "rare" if n % 7 == 0 else "common"), subject_id=f"s-{n % 5}")
            )
        txn.advance(39)
    expected = counted(store, "t1")
    store.close()
    # As a database from before the counters: their tables gone, their migration not applied.
    conn = sqlite3.connect(path)
    for table in ("counts", "groups", "group_subjects"):
        conn.execute(f"DROP TABLE review_queue_{table}")
    conn.execute(
        "DELETE FROM factledger_migrations WHERE migration_id = 'review_queue/0004-counters'"
    )
    conn.commit()
    conn.close()
    reopened = SqliteQueueStore(path)
    try:
        assert counted(reopened, "t1") == expected
        assert reopened.page("t1", QueueFilter(), QueueCursor(), 1).total == 39
    finally:
        reopened.close()


def test_a_migration_fills_the_combined_counters_of_rows_written_before_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "queue.sqlite"
    store = SqliteQueueStore(path)
    with store.transaction() as txn:
        for n in range(1, 40):
            subject = f"s-{n % 5}"
            if txn.subject(subject) is None:
                txn.put_subject(SubjectRow(subject, "t1", "lead", f"ref-{n % 5}"))
            txn.add(replace(item_row(n, "rare" if n % 7 == 0 else "common"), subject_id=subject))
        txn.advance(39)
    expected = counted(store, "t1")
    store.close()
    # As a database from before the combined counters.
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE review_queue_tuples")
    conn.execute("DROP TABLE review_queue_tuple_days")
    conn.execute("ALTER TABLE review_queue_subjects DROP COLUMN pending")
    conn.execute(
        "DELETE FROM factledger_migrations "
        "WHERE migration_id = 'review_queue/0005-combined-counters'"
    )
    conn.commit()
    conn.close()
    reopened = SqliteQueueStore(path)
    try:
        assert counted(reopened, "t1") == expected
        assert reopened.page("t1", QueueFilter(text="ref-1"), QueueCursor(), 1).total == 8
        assert_counters_true(reopened)
    finally:
        reopened.close()
