"""`KeyStore` in its own SQLite file, with `secure_delete` so a forgotten key's bytes are
overwritten on disk rather than left in a free page."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Sequence
from pathlib import Path

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import driver_errors_as
from factledger.adapters.sqlite.migrations import migrate
from factledger.application.ledger.cipher import new_key
from factledger.application.ledger.ports import KeyStoreUnavailableError

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
        return self.current_many([scope])[scope]

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        wanted = list(dict.fromkeys(scopes))
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            found = self._live(wanted)
            if len(found) == len(wanted):  # the common case needs no write transaction
                return found
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                found = self._live(wanted)
                for scope in wanted:
                    if scope not in found:
                        found[scope] = new_key()
                        key_id, key = found[scope]
                        self._conn.execute(
                            "INSERT INTO subject_keys VALUES (?, ?, ?, 1)", (key_id, scope, key)
                        )
                self._conn.execute("COMMIT")
            except BaseException:
                # A full disk or an I/O error rolls the transaction back by itself; a second
                # rollback would fail and hide that error behind its own.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        return found

    def _live(self, scopes: list[str]) -> dict[str, tuple[str, bytes]]:
        found: dict[str, tuple[str, bytes]] = {}
        for chunk in _chunks(scopes):
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT scope, key_id, key FROM subject_keys WHERE live=1 AND scope IN ({marks})",  # noqa: S608 - only placeholders
                chunk,
            ).fetchall()
            found.update((str(scope), (str(key_id), bytes(key))) for scope, key_id, key in rows)
        return found

    def live(self, scope: str) -> tuple[str, bytes] | None:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            return self._live([scope]).get(scope)

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
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key_id, key FROM subject_keys WHERE key_id IN ({marks})",  # noqa: S608 - only placeholders
                    chunk,
                ).fetchall()
                found.update((str(key_id), bytes(key)) for key_id, key in rows)
        return found

    def forget(self, scope: str) -> int:
        return self.forget_many([scope])

    def forget_many(self, scopes: Collection[str]) -> int:
        deleted = 0
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            for chunk in _chunks(list(scopes)):
                marks = ",".join("?" * len(chunk))
                cursor = self._conn.execute(
                    f"DELETE FROM subject_keys WHERE scope IN ({marks})",  # noqa: S608 - only placeholders
                    chunk,
                )
                deleted += cursor.rowcount
        return deleted

    def forget_prefix(self, prefix: str) -> int:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            cursor = self._conn.execute(
                "DELETE FROM subject_keys WHERE substr(scope, 1, ?) = ?", (len(prefix), prefix)
            )
            return cursor.rowcount

    def retire(self, scope: str, retired_scope: str) -> str | None:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            row = self._conn.execute(
                "UPDATE subject_keys SET scope=?, live=0 WHERE scope=? AND live=1 RETURNING key_id",
                (retired_scope, scope),
            ).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        self._conn.close()


def _chunks(items: list[str]) -> list[list[str]]:
    """Within SQLite's smallest limit on bound parameters."""
    return [items[start : start + 500] for start in range(0, len(items), 500)]
