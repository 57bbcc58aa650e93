"""`IdempotencyStore` in a SQLite file beside the embedded default's event store.

Every API process on the node opens the same file; `BEGIN IMMEDIATE` takes SQLite's write lock
before the claim row is read, so two first requests with one key are serialised (one claims,
the other sees its claim).

The same table also lives in the ledger's own file, for the commands whose response is
written with their events (`commits_with_events`, ADR 0037): there the store is opened on the
ledger's file and reads `earlier` (the idempotency file) for a scope's live entry before it
claims, so records saved there before the move keep answering until they expire.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast
from uuid import UUID

from factledger.adapters.sqlite.connection import SqliteWriter
from factledger.application.ledger.idempotency import (
    CLAIMED,
    DEFAULT_LEASE_S,
    DEFAULT_TTL_S,
    Claim,
    IdempotencyScope,
    IdempotencyStoreUnavailableError,
    JsonBody,
    WallClock,
    settled,
)

T = TypeVar("T")

SCHEMA = """CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant TEXT NOT NULL, principal TEXT NOT NULL, subject_id TEXT NOT NULL, key TEXT NOT NULL,
    fingerprint TEXT NOT NULL, body TEXT, expires_at REAL NOT NULL,
    PRIMARY KEY (tenant, principal, subject_id, key))"""

# The claim row goes in first; an existing row is taken over only once it has expired.
_CLAIM = """INSERT INTO idempotency_keys
    (tenant, principal, subject_id, key, fingerprint, body, expires_at)
    VALUES (?, ?, ?, ?, ?, NULL, ?)
    ON CONFLICT (tenant, principal, subject_id, key) DO UPDATE
    SET fingerprint = excluded.fingerprint, body = NULL, expires_at = excluded.expires_at
    WHERE idempotency_keys.expires_at <= ?
    RETURNING 1"""
_SCOPE = "tenant = ? AND principal = ? AND subject_id = ? AND key = ?"
_WHERE = f"{_SCOPE} AND fingerprint = ?"
_ENTRY = f"SELECT fingerprint, body, expires_at FROM idempotency_keys WHERE {_SCOPE}"  # noqa: S608
# Acts only on the row this fingerprint holds; the ledger's recorder runs it in the
# transaction of a command's events (ADR 0037), with (body, expires_at, *scope, fingerprint).
COMPLETE = f"UPDATE idempotency_keys SET body = ?, expires_at = ? WHERE {_WHERE}"  # noqa: S608


def scope_values(scope: IdempotencyScope) -> tuple[str, str, str, str]:
    """The scope's columns, in the order of the statements' placeholders."""
    return _ids(scope)


def _ids(scope: IdempotencyScope) -> tuple[str, str, str, str]:
    return (scope.tenant, scope.principal, str(scope.subject_id), scope.key)


def _migrate(conn: sqlite3.Connection) -> None:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(idempotency_keys)")}
    if columns and "subject_id" not in columns:
        # Keyed without the subject, its rows could answer for the wrong subject: none is
        # kept (they are saved responses of at most a day, not state).
        conn.execute("DROP TABLE idempotency_keys")
    conn.execute(SCHEMA)


_FORGET = "DELETE FROM idempotency_keys WHERE tenant = ? AND subject_id = ? AND body IS NOT NULL"


class SqliteIdempotencyStore:
    """Saved responses in one table of a SQLite file (`:memory:` works too).

    - `commits_with_events`: the file is the ledger's, whose recorder writes a command's
      response in its events' transaction (ADR 0037).
    - `earlier`: another store whose live entry of a scope answers before this one claims
      (the records of the idempotency file, from before a command's records moved).
    """

    def __init__(
        self,
        path: Path | str,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        lease_s: float = DEFAULT_LEASE_S,
        clock: WallClock = time.time,
        commits_with_events: bool = False,
        earlier: SqliteIdempotencyStore | None = None,
    ) -> None:
        self._ttl_s, self._lease_s, self._clock = ttl_s, lease_s, clock
        self.commits_with_events = commits_with_events
        self._earlier = earlier
        self._db = SqliteWriter(
            path, error=lambda: IdempotencyStoreUnavailableError("sqlite idempotency store failed")
        )
        # Deleted responses are overwritten in the file, not just unlinked from the b-tree.
        self._db.run_sync(lambda conn: conn.execute("PRAGMA secure_delete=ON"))
        self._db.run_sync(_migrate)

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.run(work)

    async def claim(self, scope: IdempotencyScope, fingerprint: str) -> Claim:
        if self._earlier is not None:
            entry = await self._earlier.entry(scope)
            if entry is not None:
                return settled(fingerprint, entry[0], entry[1])
        now = self._clock()
        ids = _ids(scope)

        def work(conn: sqlite3.Connection) -> Claim:
            won = conn.execute(_CLAIM, (*ids, fingerprint, now + self._lease_s, now)).fetchone()
            if won is not None:
                return CLAIMED
            row = conn.execute(
                f"SELECT fingerprint, body FROM idempotency_keys WHERE {_SCOPE}",  # noqa: S608
                ids,
            ).fetchone()
            body = None if row[1] is None else cast("JsonBody", json.loads(row[1]))
            return settled(fingerprint, row[0], body)

        return await self._run(work)

    async def complete(self, scope: IdempotencyScope, fingerprint: str, body: JsonBody) -> None:
        expires_at = self._clock() + self._ttl_s
        args = (json.dumps(body), expires_at, *_ids(scope), fingerprint)
        await self._run(lambda conn: conn.execute(COMPLETE, args))

    async def entry(self, scope: IdempotencyScope) -> tuple[str, JsonBody | None] | None:
        """The scope's live entry (fingerprint, body), if any; claims nothing."""
        now = self._clock()
        row = await self._run(lambda conn: conn.execute(_ENTRY, _ids(scope)).fetchone())
        if row is None or row[2] <= now:
            return None
        body = None if row[1] is None else cast("JsonBody", json.loads(row[1]))
        return str(row[0]), body

    @property
    def lease_s(self) -> float:
        return self._lease_s

    @property
    def ttl_s(self) -> float:
        return self._ttl_s

    async def renew(self, scope: IdempotencyScope, fingerprint: str) -> bool:
        now = self._clock()
        ids = (*_ids(scope), fingerprint)
        # A lapsed claim is not revived: a twin may already be entitled to take it over.
        renewed = await self._run(
            lambda conn: conn.execute(
                f"UPDATE idempotency_keys SET expires_at = ? WHERE {_WHERE}"  # noqa: S608
                " AND body IS NULL AND expires_at > ? RETURNING 1",
                (now + self._lease_s, *ids, now),
            ).fetchone()
        )
        return renewed is not None

    async def release(self, scope: IdempotencyScope, fingerprint: str) -> None:
        args = (*_ids(scope), fingerprint)
        await self._run(
            lambda conn: conn.execute(
                f"DELETE FROM idempotency_keys WHERE {_WHERE} AND body IS NULL",  # noqa: S608
                args,
            )
        )

    async def forget_subject(self, tenant: str, subject_id: UUID) -> int:
        args = (tenant, str(subject_id))
        deleted = await self._run(lambda conn: conn.execute(_FORGET, args).rowcount)
        if deleted:
            # The write-ahead log still holds the pages as they were before the delete.
            await self._db.checkpoint()
        return deleted

    def close(self) -> None:
        self._db.close()
