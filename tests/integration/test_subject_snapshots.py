"""Snapshots of subjects (ADR 0034): a cache that bounds a cold load, and never brings back a
forgotten value; on every event store."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import structlog.testing
from eventsourcing.persistence import AggregateRecorder, OperationalError, StoredEvent
from eventsourcing.popo import POPOAggregateRecorder
from eventsourcing.postgres import PostgresAggregateRecorder
from eventsourcing.sqlite import SQLiteAggregateRecorder

from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import NotFoundError
from factledger.application.ledger.cipher import ShreddingMapper
from factledger.application.ledger.commands import (
    ApproveChange,
    EraseSubject,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.snapshots import codec
from factledger.application.ledger.snapshots.codec import UnreadableSnapshotError
from factledger.application.ledger.snapshots.store import TOPIC, SubjectSnapshots
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as MessageRole
from factledger.domain.values import ListValue, TextValue
from factledger.testing.ledger_stores import LedgerStore, make_store, open_ledger

TENANT = "acme"
INTERVAL = 4
# Its last word alone is looked for too: letters outside hex, so no id or digest holds it by chance
# (a year once matched a hex id).
SECRET = "allergic to penicillin since kindergarten"
STAFF = Actor(ActorKind.STAFF, "staff-1")


@pytest.fixture(
    params=[
        pytest.param("popo", id="popo"),
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerStore]:
    kind: str = request.param
    postgres: PostgresLocation | None = (
        request.getfixturevalue("postgres") if kind == "postgres" else None
    )
    made = make_store(kind, workdir=tmp_path, postgres=postgres)
    made.env["FACTLEDGER_SNAPSHOT_INTERVAL"] = str(INTERVAL)
    with made.resources:
        yield made


@pytest.fixture
def ledger(store: LedgerStore) -> Iterator[Ledger]:
    with structlog.testing.capture_logs(), open_ledger(store) as opened:
        yield opened


def snapshots_of(ledger: Ledger) -> SubjectSnapshots:
    found = ledger.subject_snapshots
    assert found is not None
    return found


def proposal(subject_id: UUID, field: str, value: str) -> ProposeChange:
    return ProposeChange(
        tenant=TENANT,
        subject_id=subject_id,
        field=field,
        operation=Operation.SET,
        value=TextValue(value),
        origin=Origin.INFERRED,
        proposed_by=Actor(ActorKind.MODEL, "extractor"),
        based_on_version=0,
        condition=f"noted with {value}",
    )


def subject_with_history(ledger: Ledger, ref: str, events: int) -> UUID:
    """A subject of `events` events: a registration, then proposals of fields f0, f1, ..."""
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "patient", ref)).subject_id
    for n in range(events - 1):
        ledger.propose_change(proposal(subject_id, f"f{n}", f"value {n}"))
    return subject_id


def cold_load(ledger: Ledger, subject_id: UUID) -> Subject:
    """A load as a process's first: nothing cached, neither the subject nor its keys."""
    cache = ledger.repository.cache
    if cache is not None:
        with contextlib.suppress(KeyError):
            cache.get(subject_id, evict=True)
    snapshots_of(ledger).flush()
    assert isinstance(ledger.mapper, ShreddingMapper)
    ledger.mapper.forget_cached()
    return ledger.subject(TENANT, subject_id)


def replayed(ledger: Ledger, subject_id: UUID, version: int) -> Subject:
    """The whole stream replayed (a load of a given version never reads snapshots)."""
    found: Subject = ledger.repository.get(subject_id, version=version)
    return found


def rows(ledger: Ledger, subject_id: UUID) -> list[StoredEvent]:
    snapshots_of(ledger).flush()  # they are taken off the saving thread
    return list(snapshots_of(ledger).recorder.select_events(subject_id))


def delete_all_snapshots(recorder: AggregateRecorder) -> None:
    if isinstance(recorder, SQLiteAggregateRecorder):
        with recorder.datastore.transaction(commit=True) as cursor:
            cursor.execute(f"DELETE FROM {recorder.events_table_name}")  # noqa: S608
    elif isinstance(recorder, PostgresAggregateRecorder):
        with recorder.datastore.transaction(commit=True) as cursor:
            cursor.execute(
                f"DELETE FROM {recorder.datastore.schema}.{recorder.events_table_name}"  # noqa: S608
            )
    else:
        assert isinstance(recorder, POPOAggregateRecorder)
        with recorder._database_lock:
            recorder._stored_events.clear()
            recorder._stored_events_index.clear()


def raw_snapshot_bytes(ledger: Ledger) -> bytes:
    """Every stored snapshot's bytes, read past the ledger (as a database reader would)."""
    snapshots_of(ledger).flush()
    recorder = snapshots_of(ledger).recorder
    if isinstance(recorder, SQLiteAggregateRecorder):
        with recorder.datastore.transaction(commit=False) as cursor:
            cursor.execute(f"SELECT * FROM {recorder.events_table_name}")  # noqa: S608
            table = b"".join(bytes(row["state"]) for row in cursor.fetchall())
        # and the file itself, free pages and the write-ahead log included
        path = Path(recorder.datastore.pool.db_name)
        files = [f for f in (path, path.with_name(path.name + "-wal")) if f.exists()]
        return table + b"".join(f.read_bytes() for f in files)
    if isinstance(recorder, PostgresAggregateRecorder):
        with recorder.datastore.transaction(commit=False) as cursor:
            cursor.execute(
                f"SELECT * FROM {recorder.datastore.schema}.{recorder.events_table_name}"  # noqa: S608
            )
            return b"".join(repr(row).encode() + bytes(row["state"]) for row in cursor.fetchall())
    assert isinstance(recorder, POPOAggregateRecorder)
    return b"".join(repr(e).encode() + e.state for e in recorder._stored_events)


def state_of(subject: Subject) -> dict[str, Any]:
    return {k: v for k, v in vars(subject).items() if k != "_pending_events"}


# -- a snapshot is a cache --------------------------------------------------------------------


def test_a_cold_load_from_a_snapshot_equals_a_whole_replay(ledger: Ledger) -> None:
    subject_id = subject_with_history(ledger, "long", events=3 * INTERVAL + 2)
    assert [r.originator_version for r in rows(ledger, subject_id)][-1] == 12

    loaded = cold_load(ledger, subject_id)

    assert loaded.version == 3 * INTERVAL + 2
    assert state_of(loaded) == state_of(replayed(ledger, subject_id, loaded.version))


def test_a_durable_store_keeps_only_the_newest_snapshot_of_a_subject(ledger: Ledger) -> None:
    subject_id = subject_with_history(ledger, "pruned", events=3 * INTERVAL + 2)
    other_id = subject_with_history(ledger, "other", events=INTERVAL + 1)
    versions = [r.originator_version for r in rows(ledger, subject_id)]
    if isinstance(snapshots_of(ledger).recorder, POPOAggregateRecorder):
        assert versions == [4, 8, 12]  # the in-process store keeps them (no table to grow)
    else:
        assert versions == [12]
    assert [r.originator_version for r in rows(ledger, other_id)] == [4]  # others untouched
    assert state_of(cold_load(ledger, subject_id)) == state_of(
        replayed(ledger, subject_id, 3 * INTERVAL + 2)
    )


def test_the_cold_load_reads_the_snapshot_and_only_the_events_after_it(ledger: Ledger) -> None:
    subject_id = subject_with_history(ledger, "tail", events=2 * INTERVAL + 1)
    read: list[int | None] = []
    events = ledger.repository.event_store
    original = events.get

    def counting_get(originator_id: UUID, **kwargs: Any) -> Any:
        read.append(kwargs.get("gt"))
        return original(originator_id, **kwargs)

    events.get = counting_get  # type: ignore[method-assign]
    try:
        cold_load(ledger, subject_id)
    finally:
        events.get = original  # type: ignore[method-assign]
    assert read == [2 * INTERVAL]


def test_a_stream_shorter_than_the_interval_loads_in_one_read_without_the_snapshot_store(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject_id = subject_with_history(ledger, "short", events=INTERVAL - 1)
    events, snapshots = ledger.repository.event_store.recorder, snapshots_of(ledger).recorder
    reads: list[str] = []
    for name, recorder in (("events", events), ("snapshots", snapshots)):
        original = recorder.select_events

        def counted(*args: Any, _name: str = name, _read: Any = original, **kwargs: Any) -> Any:
            reads.append(_name)
            return _read(*args, **kwargs)

        monkeypatch.setattr(recorder, "select_events", counted)

    loaded = cold_load(ledger, subject_id)

    assert reads == ["events"]
    assert loaded.version == INTERVAL - 1
    assert state_of(loaded) == state_of(replayed(ledger, subject_id, INTERVAL - 1))


def test_an_unknown_subject_is_not_found_by_a_cold_load(ledger: Ledger) -> None:
    with pytest.raises(NotFoundError):
        cold_load(ledger, UUID(int=7))


def test_deleting_every_snapshot_changes_nothing_a_load_shows(ledger: Ledger) -> None:
    subject_id = subject_with_history(ledger, "deleted", events=2 * INTERVAL + 3)
    assert rows(ledger, subject_id)
    with_snapshots = state_of(cold_load(ledger, subject_id))

    delete_all_snapshots(snapshots_of(ledger).recorder)

    assert rows(ledger, subject_id) == []
    assert state_of(cold_load(ledger, subject_id)) == with_snapshots
    # and the next snapshot is taken as before
    ledger.propose_change(proposal(subject_id, "later", "later value"))
    ledger.propose_change(proposal(subject_id, "later2", "later value 2"))
    assert [r.originator_version for r in rows(ledger, subject_id)] == [3 * INTERVAL]


def insert_row(ledger: Ledger, subject_id: UUID, version: int, state: bytes) -> None:
    row = StoredEvent(subject_id, version, TOPIC, state)
    snapshots_of(ledger).recorder.insert_events([row])


def test_a_damaged_snapshot_costs_a_replay_not_an_answer(ledger: Ledger) -> None:
    subject_id = subject_with_history(ledger, "damaged", events=INTERVAL + 3)
    good = rows(ledger, subject_id)[-1]
    flipped = bytearray(good.state)
    flipped[-5] ^= 0xFF
    insert_row(ledger, subject_id, INTERVAL + 1, bytes(flipped))
    insert_row(ledger, subject_id, INTERVAL + 2, b"not a snapshot at all")

    loaded = cold_load(ledger, subject_id)

    assert state_of(loaded) == state_of(replayed(ledger, subject_id, INTERVAL + 3))


def test_a_snapshot_of_another_state_layout_is_not_read(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject_id = subject_with_history(ledger, "layout", events=INTERVAL + 2)
    current = cold_load(ledger, subject_id)
    monkeypatch.setattr(codec, "state_layout", lambda: "0123456789abcdef")
    older_build = codec.seal(vars(current), subject_id, INTERVAL + 2, ledger.keys)
    monkeypatch.undo()
    insert_row(ledger, subject_id, INTERVAL + 2, older_build)
    with pytest.raises(UnreadableSnapshotError, match="layout"):
        snapshots_of(ledger).latest(subject_id)

    assert state_of(cold_load(ledger, subject_id)) == state_of(current)


def test_a_snapshot_moved_to_another_subject_does_not_open(ledger: Ledger) -> None:
    first = subject_with_history(ledger, "first", events=INTERVAL)
    second = subject_with_history(ledger, "second", events=INTERVAL - 1)
    stolen = rows(ledger, first)[-1].state
    insert_row(ledger, second, INTERVAL - 1, stolen)

    with pytest.raises(UnreadableSnapshotError):
        snapshots_of(ledger).latest(second)
    assert cold_load(ledger, second).external_ref == "second"


def test_a_failing_snapshot_store_costs_neither_the_write_nor_the_load(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject_id = subject_with_history(ledger, "outage", events=INTERVAL - 1)
    recorder = snapshots_of(ledger).recorder

    def down(*_: object, **__: object) -> Any:
        raise OperationalError("snapshot table unreachable")

    monkeypatch.setattr(recorder, "insert_events", down)
    monkeypatch.setattr(recorder, "select_events", down)
    with structlog.testing.capture_logs() as logs:
        result = ledger.propose_change(proposal(subject_id, "during", "outage"))
        snapshots_of(ledger).flush()
        loaded = cold_load(ledger, subject_id)

    assert result.applied
    assert loaded.version == INTERVAL
    names = [entry["event"] for entry in logs]
    assert "ledger.snapshot_failed" in names
    assert "ledger.snapshot_store_failed" in names


def test_the_save_does_not_wait_for_its_snapshot(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject_id = subject_with_history(ledger, "waiting", events=INTERVAL - 1)
    release = threading.Event()
    snapshots = snapshots_of(ledger)
    take = snapshots.take

    def slow_take(subject: Subject) -> bool:
        assert release.wait(10)
        return take(subject)

    monkeypatch.setattr(snapshots, "take", slow_take)
    result = ledger.propose_change(proposal(subject_id, "due", "now"))  # returns meanwhile
    assert result.subject_version == INTERVAL
    assert list(snapshots.recorder.select_events(subject_id)) == []
    release.set()
    assert [r.originator_version for r in rows(ledger, subject_id)] == [INTERVAL]


# -- erasure ----------------------------------------------------------------------------------


def subject_holding_the_secret(ledger: Ledger) -> UUID:
    subject_id = subject_with_history(ledger, "patient-1", events=2)
    change = proposal(subject_id, "condition", SECRET)
    ledger.propose_change(change)
    ledger.approve_change(
        ApproveChange(TENANT, subject_id, change.change_id, reviewer_id="staff-1")
    )
    for n in range(2 * INTERVAL):
        ledger.propose_change(proposal(subject_id, f"later{n}", f"later {n}"))
    return subject_id


def test_a_snapshot_holds_the_value_until_it_is_forgotten(ledger: Ledger) -> None:
    subject_id = subject_holding_the_secret(ledger)
    newest = rows(ledger, subject_id)[-1]
    state = codec.unseal(newest.state, subject_id, newest.originator_version, ledger.keys)
    assert SECRET in repr(state)  # so the checks below can fail
    assert SECRET.encode() not in raw_snapshot_bytes(ledger)  # sealed, even before a forget


def test_a_cold_load_after_a_forget_has_no_trace_of_the_value(ledger: Ledger) -> None:
    subject_id = subject_holding_the_secret(ledger)
    taken = rows(ledger, subject_id)
    assert taken

    ledger.forget_field(
        ForgetField(TENANT, subject_id, "condition", requested_by=STAFF, reason="asked to")
    )
    for row in taken:  # unreadable at once, as the field's events are, before any load
        with pytest.raises(UnreadableSnapshotError, match="forgotten"):
            codec.unseal(row.state, subject_id, row.originator_version, ledger.keys)
    for n in range(2 * INTERVAL):  # later saves, where snapshots would be due
        ledger.propose_change(proposal(subject_id, f"after{n}", f"after {n}"))

    loaded = cold_load(ledger, subject_id)
    assert SECRET not in repr(state_of(loaded))
    assert state_of(loaded) == state_of(replayed(ledger, subject_id, loaded.version))
    for row in rows(ledger, subject_id):
        with pytest.raises(UnreadableSnapshotError):
            codec.unseal(row.state, subject_id, row.originator_version, ledger.keys)
    raw = raw_snapshot_bytes(ledger)
    assert SECRET.encode() not in raw
    assert SECRET.split()[-1].encode() not in raw


def test_a_snapshot_written_after_the_forget_from_an_older_state_is_never_read(
    ledger: Ledger,
) -> None:
    """A writer that took its snapshot just before a forget but stored it after the forget had
    deleted the keys: the snapshot is sealed under a new key, so the load must refuse it."""
    subject_id = subject_holding_the_secret(ledger)
    before_forget = cold_load(ledger, subject_id)
    ledger.forget_field(
        ForgetField(TENANT, subject_id, "condition", requested_by=STAFF, reason="asked to")
    )
    late = codec.seal(vars(before_forget), subject_id, before_forget.version, ledger.keys)
    delete_all_snapshots(snapshots_of(ledger).recorder)
    insert_row(ledger, subject_id, before_forget.version, late)

    loaded = cold_load(ledger, subject_id)

    assert SECRET not in repr(state_of(loaded))
    with pytest.raises(UnreadableSnapshotError):  # and its key is gone too
        codec.unseal(late, subject_id, before_forget.version, ledger.keys)


def test_an_erased_subject_loads_without_its_snapshots(ledger: Ledger) -> None:
    subject_id = subject_holding_the_secret(ledger)
    ledger.erase_subject(EraseSubject(TENANT, subject_id, requested_by=STAFF, reason="erasure"))

    loaded = cold_load(ledger, subject_id)

    assert loaded.erased
    assert SECRET not in repr(state_of(loaded))
    assert SECRET.encode() not in raw_snapshot_bytes(ledger)


# -- concurrency ------------------------------------------------------------------------------


def test_snapshots_taken_among_concurrent_writers_keep_versions_dense(
    store: LedgerStore,
) -> None:
    writers, each = 2, 10
    with structlog.testing.capture_logs(), ExitStack() as stack:
        first = stack.enter_context(open_ledger(store))
        ledgers = [first] + [
            stack.enter_context(open_ledger(store)) if store.shared else first
            for _ in range(writers - 1)
        ]
        subject_id = subject_with_history(first, "busy", events=1)

        def write(writer: int) -> None:
            for n in range(each):
                ledgers[writer].propose_change(proposal(subject_id, f"w{writer}n{n}", f"v{n}"))

        with ThreadPoolExecutor(writers) as pool:
            list(pool.map(write, range(writers)))

        events = list(first.events.get(subject_id))
        assert [e.originator_version for e in events] == list(range(1, 2 + writers * each))
        versions = [r.originator_version for r in rows(first, subject_id)]
        assert versions
        assert all(v % INTERVAL == 0 for v in versions)
        for opened in ledgers:
            loaded = cold_load(opened, subject_id)
            assert state_of(loaded) == state_of(replayed(opened, subject_id, loaded.version))


def test_projections_never_see_a_snapshot(ledger: Ledger) -> None:
    subject_id = subject_with_history(ledger, "projected", events=2 * INTERVAL)
    assert rows(ledger, subject_id)

    notifications = ledger.recorder.select_notifications(start=1, limit=1_000)

    assert len(notifications) == 2 * INTERVAL
    assert all(n.topic != TOPIC for n in notifications)


# -- what was said, forgotten at the subject's request (ADR 0174) -------------------------------


def subject_who_said_the_secret(ledger: Ledger) -> tuple[UUID, UUID]:
    """A subject whose line "<SECRET>" a pending request to forget what was said names."""
    subject_id = subject_with_history(ledger, "patient-2", events=2)
    at = ledger.clock.now()
    for session_id, text in (("said", f"I am {SECRET}."), ("asked", "Please forget that.")):
        line = (Message(MessageRole.SUBJECT, text, at),)
        ledger.record_session(
            RecordSession(TENANT, subject_id, session_id, Channel.CHAT, at, at, line)
        )
    for n in range(2 * INTERVAL):
        ledger.propose_change(proposal(subject_id, f"later{n}", f"later {n}"))
    request = ProposeChange(
        TENANT, subject_id, SAID_LINES, Operation.FORGET_SAID, ListValue((line_ref("said", 0),)),
        Origin.STATED, Actor(ActorKind.MODEL, "extractor"), 0,
        evidence=Evidence("asked", 0, "Please forget that."),
    )  # fmt: skip
    ledger.propose_change(request)
    return subject_id, request.change_id


def test_a_cold_load_after_forgetting_what_was_said_has_no_trace_of_it(ledger: Ledger) -> None:
    subject_id, request = subject_who_said_the_secret(ledger)
    assert rows(ledger, subject_id)  # snapshots were taken while the line was readable
    ledger.approve_change(ApproveChange(TENANT, subject_id, request, reviewer_id="staff-1"))
    for n in range(2 * INTERVAL):  # later saves, where snapshots would be due
        ledger.propose_change(proposal(subject_id, f"after{n}", f"after {n}"))

    loaded = cold_load(ledger, subject_id)

    assert SECRET not in repr(state_of(loaded))
    assert state_of(loaded) == state_of(replayed(ledger, subject_id, loaded.version))
    assert SECRET.split()[-1].encode() not in raw_snapshot_bytes(ledger)


def test_a_snapshot_from_before_forgetting_what_was_said_is_never_read(ledger: Ledger) -> None:
    subject_id, request = subject_who_said_the_secret(ledger)
    before_forget = cold_load(ledger, subject_id)
    ledger.approve_change(ApproveChange(TENANT, subject_id, request, reviewer_id="staff-1"))
    late = codec.seal(vars(before_forget), subject_id, before_forget.version, ledger.keys)
    delete_all_snapshots(snapshots_of(ledger).recorder)
    insert_row(ledger, subject_id, before_forget.version, late)

    assert SECRET not in repr(state_of(cold_load(ledger, subject_id)))
