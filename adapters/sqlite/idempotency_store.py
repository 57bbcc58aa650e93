"""`IdempotencyStore` in a SQLite file beside the embedded default's event store.

Every API process on the node opens the same file; `BEGIN IMMEDIATE` takes SQLite's write lock
before the claim row is read, so two first requests with one key are serialised (one claims,
the other sees its claim).

Responses written with their events: the ledger's recorder writes a command's
response into an `idempotency_keys` table of the ledger's own file, in its events'
transaction (`ledger_recorder`). Given that file (`responses_with_events`), the store opens
a second connection on it and `ledger_commands` claims like the store does, after reading
there first (a read: it takes no write lock of the ledger's): a response saved with its events
answers a retry, whatever became of the claim in this file. (Not an ATTACH: `BEGIN IMMEDIATE`
would take the write lock of every attached file, the ledger's too, for every claim.)
Claims, renewals and releases stay in this file, for every command, so a key is refused for
another request whichever route used it first, and an append never waits for the ledger's
write lock.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast
from uuid import UUID

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import SqliteWriter
from factledger.application.ledger.idempotency import (
    CLAIMED,
    DEFAULT_LEASE_S,
    DEFAULT_TTL_S,
    SWEEP_GRACE_S,
    Claim,
    IdempotencyScope,
    JsonBody,
    WallClock,
    settled,
)
from factledger.application.ledger.ports import IdempotencyStoreUnavailableError

T = TypeVar("T")

SCHEMA = """CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant TEXT NOT NULL, principal TEXT NOT NULL, subject_id TEXT NOT NULL, key TEXT NOT NULL,
    fingerprint TEXT NOT NULL, body TEXT, expires_at REAL NOT NULL,
    PRIMARY KEY (tenant, principal, subject_id, key))"""

# What `sweep_expired` looks up; kept in both files (the ledger's recorder creates it there).
EXPIRY_INDEX = "CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at)"
_SWEEP = """DELETE FROM idempotency_keys WHERE rowid IN
    (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)"""

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
_COMPLETE = f"UPDATE idempotency_keys SET body = ?, expires_at = ? WHERE {_WHERE}"  # noqa: S608
# The ledger's recorder runs it in the transaction of a command's events, with
# (*scope, fingerprint, body, expires_at). The claim itself lives in the idempotency file, so
# the row is inserted; an expired one of an earlier use of the key is replaced.
SAVE_WITH_EVENTS = """INSERT INTO idempotency_keys
    (tenant, principal, subject_id, key, fingerprint, body, expires_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant, principal, subject_id, key) DO UPDATE
    SET fingerprint = excluded.fingerprint, body = excluded.body,
    expires_at = excluded.expires_at"""
_SAVED_WITH_EVENTS = (
    f"SELECT fingerprint, body FROM idempotency_keys WHERE {_SCOPE} AND expires_at > ?"  # noqa: S608
)


def scope_values(scope: IdempotencyScope) -> tuple[str, str, str, str]:
    """The scope's columns, in the order of the statements' placeholders."""
    return _ids(scope)


def _ids(scope: IdempotencyScope) -> tuple[str, str, str, str]:
    return (scope.tenant, scope.principal, str(scope.subject_id), scope.key)


def _drop_unscoped(conn: sqlite3.Connection) -> None:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(idempotency_keys)")}
    if columns and "subject_id" not in columns:
        # Keyed without the subject, its rows could answer for the wrong subject: none is
        # kept (they are saved responses of at most a day, not state).
        conn.execute("DROP TABLE idempotency_keys")


# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one. The
# first is the table as it stood before versioning, a table from before its subject column
# replaced.
MIGRATIONS = (StoreMigration("0001-tables", (_drop_unscoped, SCHEMA, EXPIRY_INDEX)),)


_FORGET = "DELETE FROM idempotency_keys WHERE tenant = ? AND subject_id = ? AND body IS NOT NULL"
_FORGET_WITH_EVENTS = "DELETE FROM idempotency_keys WHERE tenant = ? AND subject_id = ?"


class SqliteIdempotencyStore:
    """Saved responses in one table of a SQLite file (`:memory:` works too).

    `responses_with_events`: the ledger's SQLite file, whose recorder saves the responses of
    `ledger_commands` with their events; without it, `ledger_commands` is the store
    itself and every response is saved after its command.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        lease_s: float = DEFAULT_LEASE_S,
        clock: WallClock = time.time,
        responses_with_events: Path | None = None,
    ) -> None:
        self._ttl_s, self._lease_s, self._clock = ttl_s, lease_s, clock
        self._db = SqliteWriter(
            path, error=lambda: IdempotencyStoreUnavailableError("sqlite idempotency store failed")
        )
        # Deleted responses are overwritten in the file, not just unlinked from the b-tree.
        self._db.run_sync(lambda conn: conn.execute("PRAGMA secure_delete=ON"))
        self._db.migrate("idempotency_keys", MIGRATIONS)
        self._with_events = responses_with_events is not None
        self._ledger: SqliteWriter | None = None
        if responses_with_events is not None:
            self._ledger = SqliteWriter(
                responses_with_events,
                error=lambda: IdempotencyStoreUnavailableError("sqlite ledger responses failed"),
            )
            self._ledger.run_sync(lambda conn: conn.execute("PRAGMA secure_delete=ON"))
            self._ledger.migrate("idempotency_keys", MIGRATIONS)

    @property
    def ledger_commands(self) -> SqliteIdempotencyStore | LedgerCommandKeys:
        """Where commands that save ledger events and render their response claim keys."""
        return LedgerCommandKeys(self) if self._with_events else self

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.run(work)

    async def claim(
        self, scope: IdempotencyScope, fingerprint: str, *, with_events: bool = False
    ) -> Claim:
        now = self._clock()
        ids = _ids(scope)

        def work(conn: sqlite3.Connection) -> Claim:
            if with_events and self._ledger is not None:
                # A response saved with its events answers first: its claim here may have
                # lapsed (the process died before answering) or been taken over since.
                saved = self._ledger.read(_SAVED_WITH_EVENTS, (*ids, now))
                if saved is not None:
                    saved_body = cast("JsonBody", json.loads(str(saved[1])))
                    return settled(fingerprint, str(saved[0]), saved_body)
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
        await self._run(lambda conn: conn.execute(_COMPLETE, args))

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

    async def sweep_expired(self, limit: int) -> int:
        now = self._clock() - SWEEP_GRACE_S
        swept: int = await self._run(lambda conn: conn.execute(_SWEEP, (now, limit)).rowcount)
        if self._ledger is not None and swept < limit:
            rest = limit - swept
            swept += await self._ledger.run(
                lambda conn: int(conn.execute(_SWEEP, (now, rest)).rowcount)
            )
        return swept

    async def forget_subject(self, tenant: str, subject_id: UUID) -> int:
        args = (tenant, str(subject_id))

        deleted: int = await self._run(lambda conn: conn.execute(_FORGET, args).rowcount)
        if self._ledger is not None:
            ledger = self._ledger
            with_events: int = await ledger.run(
                lambda conn: conn.execute(_FORGET_WITH_EVENTS, args).rowcount
            )
            if with_events:
                await ledger.checkpoint()
            deleted += with_events
        if deleted:
            # The write-ahead log still holds the pages as they were before the delete.
            await self._db.checkpoint()
        return deleted

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
        self._db.close()


class LedgerCommandKeys:
    """The store as a command that saves ledger events sees it: claims look for a response
    saved with the events first; the ledger's recorder saves the response."""

    commits_with_events = True
    # The claim is in the idempotency file: the request completes it too once answered, so
    # the key stays refused to another request after its lease.
    claims_apart_from_events = True

    def __init__(self, store: SqliteIdempotencyStore) -> None:
        self._store = store

    async def claim(self, scope: IdempotencyScope, fingerprint: str) -> Claim:
        return await self._store.claim(scope, fingerprint, with_events=True)

    async def complete(self, scope: IdempotencyScope, fingerprint: str, body: JsonBody) -> None:
        await self._store.complete(scope, fingerprint, body)

    async def release(self, scope: IdempotencyScope, fingerprint: str) -> None:
        await self._store.release(scope, fingerprint)

    async def renew(self, scope: IdempotencyScope, fingerprint: str) -> bool:
        return await self._store.renew(scope, fingerprint)

    async def sweep_expired(self, limit: int) -> int:
        return await self._store.sweep_expired(limit)

    async def forget_subject(self, tenant: str, subject_id: UUID) -> int:
        return await self._store.forget_subject(tenant, subject_id)

    @property
    def lease_s(self) -> float:
        return self._store.lease_s

    @property
    def ttl_s(self) -> float:
        return self._store.ttl_s

    def close(self) -> None:
        """Closes the store it is a view of."""
        self._store.close()
