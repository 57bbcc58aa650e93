"""Group commit in `SqliteWriter`: concurrent units share transactions, each keeps its own
outcome, and nothing is answered before it is durable (a killed process loses no answered
write and doubles none)."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from factledger.adapters.sqlite.connection import SqliteWriter


class StoreDownError(Exception):
    pass


def _writer(path: Path) -> SqliteWriter:
    writer = SqliteWriter(path, error=lambda: StoreDownError("store down"))
    writer.run_sync(lambda conn: conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)"))
    return writer


def _insert(k: int) -> object:
    return lambda conn: conn.execute("INSERT INTO t VALUES (?, 'v')", (k,)).rowcount


def _keys(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT k FROM t ORDER BY k")]


async def test_concurrent_units_share_transactions_and_all_commit(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "db.sqlite")
    results = await asyncio.gather(*(writer.run(_insert(k)) for k in range(200)))  # type: ignore[arg-type]
    assert results == [1] * 200
    assert _keys(tmp_path / "db.sqlite") == list(range(200))
    assert writer._committer.batches < 200  # several units per transaction
    writer.close()


async def test_a_failing_unit_gets_its_error_and_the_others_commit(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "db.sqlite")

    def half_then_fail(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES (100, 'half')")
        raise ValueError("rule broken")

    outcomes = await asyncio.gather(
        writer.run(_insert(1)),  # type: ignore[arg-type]
        writer.run(half_then_fail),
        writer.run(_insert(1)),  # type: ignore[arg-type] - a duplicate key: sqlite3.Error
        writer.run(_insert(2)),  # type: ignore[arg-type]
        return_exceptions=True,
    )
    assert outcomes[0] == 1
    assert isinstance(outcomes[1], ValueError)
    assert isinstance(outcomes[2], StoreDownError)
    assert isinstance(outcomes[2].__cause__, sqlite3.IntegrityError)
    assert outcomes[3] == 1
    assert _keys(tmp_path / "db.sqlite") == [1, 2]  # nothing of the failed units
    writer.close()


async def test_a_unit_sees_the_writes_of_the_units_before_it(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "db.sqlite")

    def count(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT count(*) FROM t").fetchone()[0])

    first, seen = await asyncio.gather(writer.run(_insert(7)), writer.run(count))  # type: ignore[arg-type]
    assert (first, seen) == (1, 1)
    writer.close()


async def test_an_abandoned_transaction_fails_the_whole_batch(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "db.sqlite")

    def abandon(conn: sqlite3.Connection) -> None:
        conn.execute("ROLLBACK")  # as SQLite does on a full disk or an I/O error
        raise sqlite3.OperationalError("disk I/O error")

    outcomes = await asyncio.gather(
        writer.run(_insert(1)),  # type: ignore[arg-type]
        writer.run(abandon),
        return_exceptions=True,
    )
    if writer._committer.batches == 1:  # both in one transaction: both lost, both told
        assert all(isinstance(o, StoreDownError) for o in outcomes)
        assert _keys(tmp_path / "db.sqlite") == []
    else:
        assert outcomes[0] == 1
        assert _keys(tmp_path / "db.sqlite") == [1]
    assert await writer.run(_insert(3)) == 1  # type: ignore[arg-type] - the writer goes on
    writer.close()


_APPENDER = textwrap.dedent(
    """
    import asyncio, sys
    from factledger.adapters.sqlite.connection import SqliteWriter

    writer = SqliteWriter(sys.argv[1], error=lambda: RuntimeError("down"))
    writer.run_sync(lambda c: c.execute("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY)"))

    async def one(k):
        await writer.run(lambda c: c.execute("INSERT INTO t VALUES (?)", (k,)))
        print(k, flush=True)  # answered: it must survive the kill

    async def main():
        k = 0
        while True:
            await asyncio.gather(*(one(k + n) for n in range(16)))
            k += 16

    asyncio.run(main())
    """
)


def test_a_killed_process_loses_no_answered_write(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    process = subprocess.Popen(  # noqa: S603 - this interpreter, our own script
        [sys.executable, "-c", _APPENDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    answered: list[int] = []
    deadline = time.monotonic() + 60
    while len(answered) < 2_000 and time.monotonic() < deadline:
        answered.append(int(process.stdout.readline()))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    answered.extend(int(line) for line in process.stdout.read().split())
    stored = _keys(path)
    assert len(answered) >= 2_000
    assert set(answered) <= set(stored)  # nothing answered is lost
    assert len(stored) == len(set(stored))  # nothing doubled
