"""`KeyStore` in its own SQLite file, with `secure_delete` so a forgotten key's bytes are
overwritten on disk rather than left in a free page."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection
from pathlib import Path

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import driver_errors_as
from factledger.adapters.sqlite.migrations import migrate
from factledger.application.ledger.key_store import KeyStoreUnavailableError, new_key

# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (
    StoreMigration(
        "0001-tables",
        (
            """CREATE TABLE IF NOT EXISTS subject_keys (
            key_id TEXT PRIMARY KEY, scope TEXT NOT NULL, key BLOB NOT NULL,
            live INTEGER NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS subject_keys_scope ON subject_keys (scope)",
        ),
    ),
)


def _unavailable() -> KeyStoreUnavailableError:
    return KeyStoreUnavailableError("sqlite key store failed")


class SqliteKeyStore:
    """Keys of one ledger; back this file up with (not inside) the ledger's own file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        with driver_errors_as(_unavailable, path=self._path):
            self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA secure_delete=ON")
            self._conn.execute("PRAGMA busy_timeout=10000")
            migrate(self._conn, path, "keys", MIGRATIONS)
        self._lock = threading.Lock()

    def current(self, scope: str) -> tuple[str, bytes]:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            row = self._conn.execute(
                "SELECT key_id, key FROM subject_keys WHERE scope=? AND live=1", (scope,)
            ).fetchone()
            if row is not None:  # the common case needs no write transaction
                return str(row[0]), bytes(row[1])
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                row = self._conn.execute(
                    "SELECT key_id, key FROM subject_keys WHERE scope=? AND live=1", (scope,)
                ).fetchone()
                if row is None:
                    row = new_key()
                    self._conn.execute(
                        "INSERT INTO subject_keys VALUES (?, ?, ?, 1)", (row[0], scope, row[1])
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                # A full disk or an I/O error rolls the transaction back by itself; a second
                # rollback would fail and hide that error behind its own.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        return str(row[0]), bytes(row[1])

    def key(self, key_id: str) -> bytes | None:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            row = self._conn.execute(
                "SELECT key FROM subject_keys WHERE key_id=?", (key_id,)
            ).fetchone()
        return None if row is None else bytes(row[0])

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        wanted = list(key_ids)
        found: dict[str, bytes] = {}
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            # Within SQLite's smallest limit on bound parameters.
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key_id, key FROM subject_keys WHERE key_id IN ({marks})",  # noqa: S608 - only placeholders
                    chunk,
                ).fetchall()
                found.update((str(key_id), bytes(key)) for key_id, key in rows)
        return found

    def forget(self, scope: str) -> int:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            cursor = self._conn.execute("DELETE FROM subject_keys WHERE scope=?", (scope,))
            return cursor.rowcount

    def close(self) -> None:
        self._conn.close()
