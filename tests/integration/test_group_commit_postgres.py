"""PostgreSQL group commit (ADR 0027): concurrent saves share transactions, a unit whose
version is taken fails alone, what runs `in_transaction` commits with the events or not at
all, and commits in one schema never wake a listener of another."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent
from support.proposals import numbered

from factledger.adapters.postgres.commit_listener import CommitListener, start_listening
from factledger.adapters.postgres.event_store import commit_channel
from factledger.adapters.postgres.ledger_recorder import GroupCommitRecorder
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.testing.ledger_stores import LedgerStore, make_store, open_ledger

pytestmark = pytest.mark.integration
TENANT = "acme"


@pytest.fixture
def store(postgres: PostgresLocation, tmp_path: Path) -> Iterator[LedgerStore]:
    shared = make_store("postgres", workdir=tmp_path, postgres=postgres)
    with shared.resources:
        yield shared


def group_of(ledger: Ledger) -> GroupCommitRecorder:
    recorder = ledger.recorder
    assert isinstance(recorder, GroupCommitRecorder)
    return recorder


def versions(store: LedgerStore, subject_id: uuid.UUID) -> list[int]:
    schema = store.env["POSTGRES_SCHEMA"]
    with psycopg.connect(conninfo(store)) as conn:
        rows = conn.execute(
            psycopg.sql.SQL(
                "SELECT originator_version FROM {}.ledger_events WHERE originator_id = %s"
                " ORDER BY originator_version"
            ).format(psycopg.sql.Identifier(schema)),
            (subject_id,),
        ).fetchall()
    return [int(r[0]) for r in rows]


def conninfo(store: LedgerStore) -> str:
    env = store.env
    return psycopg.conninfo.make_conninfo(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=env["POSTGRES_PORT"],
        user=env["POSTGRES_USER"],
        password=env["POSTGRES_PASSWORD"],
    )


def test_concurrent_saves_on_different_subjects_share_commits(store: LedgerStore) -> None:
    with open_ledger(store) as ledger:
        ids = [
            ledger.register_subject(RegisterSubject(TENANT, "lead", f"l-{n}")).subject_id
            for n in range(16)
        ]
        recorder = group_of(ledger)
        batches_before, units_before = recorder.group.batches, recorder.group.units
        with ThreadPoolExecutor(16) as pool:
            list(
                pool.map(
                    lambda job: ledger.propose_change(numbered(ids[job % 16], job)), range(160)
                )
            )
        units = recorder.group.units - units_before
        batches = recorder.group.batches - batches_before
        assert units >= 160
        assert batches < units  # some commits carried more than one save
        for subject_id in ids:
            assert versions(store, subject_id) == list(range(1, 12))


def test_writers_of_one_subject_lose_nothing_and_double_nothing(store: LedgerStore) -> None:
    with ExitStack() as stack:
        ledgers = [stack.enter_context(open_ledger(store)) for _ in range(3)]
        subject_id = (
            ledgers[0].register_subject(RegisterSubject(TENANT, "lead", "shared")).subject_id
        )
        with ThreadPoolExecutor(3) as pool:
            list(
                pool.map(
                    lambda n: ledgers[n % 3].propose_change(numbered(subject_id, n)), range(36)
                )
            )
        assert versions(store, subject_id) == list(range(1, 38))
        fields = {c.field for c in ledgers[0].subject(TENANT, subject_id).changes.values()}
        assert fields == {f"field_{n}" for n in range(36)}


def stored(subject_id: uuid.UUID, version: int) -> StoredEvent:
    return StoredEvent(subject_id, version, "test:Event", b"{}")


def test_a_unit_whose_version_is_taken_fails_alone(store: LedgerStore) -> None:
    with open_ledger(store) as ledger:
        recorder = group_of(ledger)
        taken, free = uuid.uuid4(), uuid.uuid4()
        recorder.insert_events([stored(taken, 1)])
        work = [([stored(taken, 1), stored(taken, 2)], None), ([stored(free, 1)], None)]
        outcomes = recorder._run_batch(work)
        assert isinstance(outcomes[0], IntegrityError)
        assert isinstance(outcomes[1], list)
        assert len(outcomes[1]) == 1
        # The colliding unit's second event went in with the batch, then out again.
        assert versions(store, taken) == [1]
        assert versions(store, free) == [1]


def test_what_runs_in_the_transaction_commits_with_the_events_or_not_at_all(
    store: LedgerStore,
) -> None:
    schema = store.env["POSTGRES_SCHEMA"]
    table = psycopg.sql.Identifier(schema, "hook_marks")
    with psycopg.connect(conninfo(store), autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("CREATE TABLE {} (ids bigint[])").format(table))

    def mark(cur: psycopg.Cursor[object], ids: object) -> None:
        cur.execute(psycopg.sql.SQL("INSERT INTO {} VALUES (%s)").format(table), (ids,))

    def broken(cur: psycopg.Cursor[object], ids: object) -> None:
        raise RuntimeError("fails after the insert, before the commit")

    with open_ledger(store) as ledger:
        recorder = group_of(ledger)
        kept, lost = uuid.uuid4(), uuid.uuid4()
        ids = recorder.insert_events([stored(kept, 1)], in_transaction=mark)
        with pytest.raises(RuntimeError):
            recorder.insert_events([stored(lost, 1)], in_transaction=broken)
    with psycopg.connect(conninfo(store)) as conn:
        marks = conn.execute(psycopg.sql.SQL("SELECT ids FROM {}").format(table)).fetchall()
    assert marks == [(list(ids or []),)]
    assert versions(store, kept) == [1]
    assert versions(store, lost) == []


async def test_a_commit_wakes_only_the_listeners_of_its_own_schema(
    postgres: PostgresLocation, tmp_path: Path
) -> None:
    first = make_store("postgres", workdir=tmp_path, postgres=postgres)
    second = make_store("postgres", workdir=tmp_path, postgres=postgres)
    with first.resources, second.resources, open_ledger(first) as a, open_ledger(second) as b:
        channel_a, channel_b = commit_channel(a.recorder), commit_channel(b.recorder)
        assert channel_a is not None
        assert channel_a != channel_b
        heard: list[float] = []
        listener = CommitListener(postgres.conninfo, channel_a, lambda: heard.append(1.0))
        halt = start_listening(listener)
        try:
            deadline = time.monotonic() + 10
            while listener.connections == 0:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            before = len(heard)
            await asyncio.to_thread(b.register_subject, RegisterSubject(TENANT, "lead", "b"))
            await asyncio.sleep(1.0)
            assert len(heard) == before  # the other schema's commit woke nobody here
            await asyncio.to_thread(a.register_subject, RegisterSubject(TENANT, "lead", "a"))
            deadline = time.monotonic() + 5
            while len(heard) == before:
                assert time.monotonic() < deadline, "its own schema's commit was not heard"
                await asyncio.sleep(0.05)
        finally:
            await halt()
