"""`DeliveryLog` in a SQLite file beside the embedded default's event store: positions and
attempts survive a restart, so delivery resumes where it stopped."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import SqliteWriter
from factledger.application.webhooks.ports import Delivery, DeliveryLogUnavailableError, Outcome

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS webhook_positions (
        endpoint TEXT PRIMARY KEY, position INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS webhook_deliveries (
        id INTEGER PRIMARY KEY AUTOINCREMENT, endpoint TEXT NOT NULL, position INTEGER NOT NULL,
        attempt INTEGER NOT NULL, outcome TEXT NOT NULL, status INTEGER, error TEXT,
        at TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint ON webhook_deliveries "
    "(endpoint, id)",
)
# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", _SCHEMA),)
_ADVANCE = """INSERT INTO webhook_positions (endpoint, position) VALUES (?, ?)
    ON CONFLICT (endpoint) DO UPDATE SET position = max(position, excluded.position)"""


class SqliteDeliveryLog:
    def __init__(self, path: Path | str) -> None:
        self._db = SqliteWriter(
            path, error=lambda: DeliveryLogUnavailableError("sqlite delivery log failed")
        )
        self._db.migrate("webhook_deliveries", MIGRATIONS)

    def close(self) -> None:
        self._db.conn.close()

    async def position(self, endpoint: str) -> int:
        def read(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT position FROM webhook_positions WHERE endpoint = ?", (endpoint,)
            ).fetchone()
            return 0 if row is None else int(row[0])

        return await self._db.run(read)

    async def record(self, delivery: Delivery, *, advance_to: int | None) -> None:
        def write(conn: sqlite3.Connection) -> None:
            d = delivery
            conn.execute(
                "INSERT INTO webhook_deliveries (endpoint, position, attempt, outcome, status, "
                "error, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    d.endpoint,
                    d.position,
                    d.attempt,
                    d.outcome.value,
                    d.status,
                    d.error,
                    d.at.isoformat(),
                ),
            )
            if advance_to is not None:
                conn.execute(_ADVANCE, (d.endpoint, advance_to))

        await self._db.run(write)

    async def deliveries(self, endpoint: str, *, limit: int) -> Sequence[Delivery]:
        def read(conn: sqlite3.Connection) -> list[Delivery]:
            rows = conn.execute(
                "SELECT endpoint, position, attempt, outcome, status, error, at "
                "FROM webhook_deliveries WHERE endpoint = ? ORDER BY id DESC LIMIT ?",
                (endpoint, limit),
            ).fetchall()
            return [
                Delivery(e, p, a, Outcome(o), s, err, datetime.fromisoformat(at))
                for e, p, a, o, s, err, at in rows
            ]

        return await self._db.run(read)
