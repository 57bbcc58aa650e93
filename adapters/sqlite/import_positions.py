"""`ImportPositions` in a SQLite file beside the embedded default's ledger."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, cast

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import SqliteWriter
from factledger.application.importing.positions import (
    ImportPosition,
    ImportPositionsUnavailableError,
)

_SCHEMA = """CREATE TABLE IF NOT EXISTS import_positions (
    tenant TEXT NOT NULL, import_id TEXT NOT NULL, line INTEGER NOT NULL, digest TEXT NOT NULL,
    report TEXT NOT NULL, finished INTEGER NOT NULL, PRIMARY KEY (tenant, import_id))"""
# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", (_SCHEMA,)),)
# A position moves forward only: a twin that is behind never moves it back.
_SAVE = """INSERT INTO import_positions VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant, import_id) DO UPDATE SET line = excluded.line,
    digest = excluded.digest, report = excluded.report, finished = excluded.finished
    WHERE import_positions.line <= excluded.line
    RETURNING 1"""
_GET = """SELECT line, digest, report, finished FROM import_positions
    WHERE tenant = ? AND import_id = ?"""


class SqliteImportPositions:
    def __init__(self, path: Path | str) -> None:
        self._db = SqliteWriter(
            path, error=lambda: ImportPositionsUnavailableError("sqlite import positions failed")
        )
        self._db.migrate("import_positions", MIGRATIONS)

    async def get(self, tenant: str, import_id: str) -> ImportPosition | None:
        def work(conn: sqlite3.Connection) -> ImportPosition | None:
            row = conn.execute(_GET, (tenant, import_id)).fetchone()
            if row is None:
                return None
            report = cast("dict[str, Any]", json.loads(row[2]))
            return ImportPosition(int(row[0]), str(row[1]), report, bool(row[3]))

        return await self._db.run(work)

    async def save(self, tenant: str, import_id: str, position: ImportPosition) -> bool:
        args = (
            tenant,
            import_id,
            position.line,
            position.digest,
            json.dumps(position.report),
            int(position.finished),
        )
        stored = await self._db.run(lambda conn: conn.execute(_SAVE, args).fetchone())
        return stored is not None

    def close(self) -> None:
        self._db.close()
