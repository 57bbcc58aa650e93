"""Rate limits shared by the processes of one host through a SQLite file beside the ledger
(`<data dir>/limits.sqlite`): one row per key, one `INSERT ... ON CONFLICT DO UPDATE ...
RETURNING` per check (`application.rate_limits` has the arithmetic).

Checks queued at once share one write transaction (`SqliteWriter`'s group commit), so a busy
process pays one commit for many. Times are the host's wall clock: the processes sharing a
data directory share it. A row whose time has passed is no different from no row; `prune`
deletes those.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import SqliteWriter
from factledger.application.rate_limits import (
    Clock,
    Rate,
    RateStoreUnavailableError,
    wait_s,
)

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS rate_limits"
    " (key TEXT PRIMARY KEY, tat REAL NOT NULL, ok INTEGER NOT NULL) WITHOUT ROWID"
)
# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", (SCHEMA,)),)
# `ok` and `tat` read the row as it was (SQLite evaluates every SET against the old row).
TAKE = """
INSERT INTO rate_limits (key, tat, ok) VALUES (:key, :now + :interval, 1)
ON CONFLICT (key) DO UPDATE SET
  ok = (max(tat, :now) + :interval - :now <= :tolerance),
  tat = CASE WHEN max(tat, :now) + :interval - :now <= :tolerance
        THEN max(tat, :now) + :interval ELSE tat END
RETURNING tat, ok
"""
# Pruned every this many checks: rows whose time has passed (their keys have a full burst).
PRUNE_EVERY = 10_000


class SqliteRateStore:
    def __init__(self, path: Path | str, *, clock: Clock = time.time) -> None:
        self._clock = clock
        self._db = SqliteWriter(
            path, error=lambda: RateStoreUnavailableError("sqlite rate-limit store failed")
        )
        self._db.migrate("rate_limits", MIGRATIONS)
        # No fsync per commit: counts lost to a power cut only give their keys a fresh burst.
        with self._db.lock:
            self._db.conn.execute("PRAGMA synchronous=OFF")
        self._checks = 0

    async def take(self, key: str, rate: Rate) -> float:
        return (await self.take_then((key, rate), None))[0]

    async def take_then(
        self, first: tuple[str, Rate], then: tuple[str, Rate] | None
    ) -> tuple[float, float]:
        now = self._clock()

        def upsert(conn: sqlite3.Connection, key: str, rate: Rate) -> float:
            args = {
                "key": key,
                "now": now,
                "interval": rate.interval_s,
                "tolerance": rate.admits_within_s,
            }
            tat, ok = conn.execute(TAKE, args).fetchone()
            return 0.0 if ok else wait_s(_seconds(tat), now, rate)

        def work(conn: sqlite3.Connection) -> tuple[float, float]:
            waited = upsert(conn, *first)
            if waited or then is None:
                return waited, 0.0
            return 0.0, upsert(conn, *then)

        waits = await self._db.run(work)
        self._checks += 1
        if self._checks % PRUNE_EVERY == 0:
            await self.prune()
        return waits

    async def wait_s(self, key: str, rate: Rate) -> float:
        now = self._clock()
        statement = "SELECT tat FROM rate_limits WHERE key = ?"
        # Off the loop: the read waits for the connection while the writer thread commits.
        row = await asyncio.to_thread(self._db.read, statement, (key,))
        return 0.0 if row is None else wait_s(_seconds(row[0]), now, rate)

    async def prune(self) -> int:
        """Deletes the rows whose time has passed; returns how many."""
        now = self._clock()

        def work(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM rate_limits WHERE tat < ?", (now,)).rowcount

        return await self._db.run(work)

    def close(self) -> None:
        self._db.close()


def _seconds(value: object) -> float:
    if not isinstance(value, int | float):
        raise RateStoreUnavailableError(f"rate_limits holds a {type(value).__name__} time")
    return float(value)
