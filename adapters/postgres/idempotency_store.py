"""`IdempotencyStore` in PostgreSQL beside the event store: every API process shares it.

The claim is one `INSERT ... ON CONFLICT DO UPDATE ... WHERE expired`: of two concurrent first
requests, the second blocks on the first's row lock, then finds a live row and is told the key
is in progress; it never runs the command.
"""

from __future__ import annotations

import time
from typing import Any, cast
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.migrations import in_schema
from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
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

_SCHEMA = """CREATE TABLE IF NOT EXISTS {schema}.idempotency_keys (
    tenant text NOT NULL, principal text NOT NULL, subject_id uuid NOT NULL, key text NOT NULL,
    fingerprint text NOT NULL, body jsonb, expires_at double precision NOT NULL,
    PRIMARY KEY (tenant, principal, subject_id, key))"""
_EXPIRY_INDEX = """CREATE INDEX IF NOT EXISTS idempotency_keys_expiry
    ON {schema}.idempotency_keys (expires_at)"""
# Rows a request holds (a claim being completed with its events) are left for the next sweep.
_SWEEP = """DELETE FROM {schema}.idempotency_keys WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM {schema}.idempotency_keys WHERE expires_at <= %s
    LIMIT %s FOR UPDATE SKIP LOCKED))"""
_CLAIM = """INSERT INTO {schema}.idempotency_keys AS k
    (tenant, principal, subject_id, key, fingerprint, body, expires_at)
    VALUES (%s, %s, %s, %s, %s, NULL, %s)
    ON CONFLICT (tenant, principal, subject_id, key) DO UPDATE
    SET fingerprint = excluded.fingerprint, body = NULL, expires_at = excluded.expires_at
    WHERE k.expires_at <= %s
    RETURNING 1"""
_READ = """SELECT fingerprint, body FROM {schema}.idempotency_keys
    WHERE tenant = %s AND principal = %s AND subject_id = %s AND key = %s"""
# Both act only on the row this fingerprint holds. The ledger's recorder runs COMPLETE in the
# transaction of a command's events.
COMPLETE = """UPDATE {schema}.idempotency_keys SET body = %s, expires_at = %s
    WHERE tenant = %s AND principal = %s AND subject_id = %s AND key = %s AND fingerprint = %s"""
# A lapsed claim is not revived: a twin may already be entitled to take it over.
_RENEW = """UPDATE {schema}.idempotency_keys SET expires_at = %s
    WHERE tenant = %s AND principal = %s AND subject_id = %s AND key = %s AND fingerprint = %s
    AND body IS NULL AND expires_at > %s RETURNING 1"""
_RELEASE = """DELETE FROM {schema}.idempotency_keys
    WHERE tenant = %s AND principal = %s AND subject_id = %s AND key = %s AND fingerprint = %s
    AND body IS NULL"""
# A table keyed without the subject could answer for the wrong subject; its rows are saved
# responses of at most a day, not state, so it is dropped rather than converted.
_UNSCOPED = """SELECT 1 FROM information_schema.tables t WHERE t.table_schema = %s
    AND t.table_name = 'idempotency_keys' AND NOT EXISTS (
        SELECT 1 FROM information_schema.columns c WHERE c.table_schema = t.table_schema
        AND c.table_name = t.table_name AND c.column_name = 'subject_id')"""


def _ids(scope: IdempotencyScope) -> tuple[str, str, UUID, str]:
    return (scope.tenant, scope.principal, scope.subject_id, scope.key)


_FORGET = """DELETE FROM {schema}.idempotency_keys
    WHERE tenant = %s AND subject_id = %s AND body IS NOT NULL"""


class PostgresIdempotencyStore:
    """Saved responses in one table of one schema; build it with `await ....connect(dsn)`.

    Kept in the event store's schema, where the ledger's recorder writes a command's response
    with its events (`commits_with_events`)."""

    commits_with_events = True

    def __init__(
        self,
        tables: PostgresTables,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        lease_s: float = DEFAULT_LEASE_S,
        clock: WallClock = time.time,
    ) -> None:
        self._tables = tables
        self._q, self._run = tables.q, tables.run
        self._ttl_s, self._lease_s, self._clock = ttl_s, lease_s, clock

    @classmethod
    async def connect(
        cls,
        conninfo: str,
        *,
        schema: str = "public",
        pool: PoolOptions = DEFAULT_POOL,
        ttl_s: float = DEFAULT_TTL_S,
        lease_s: float = DEFAULT_LEASE_S,
        clock: WallClock = time.time,
    ) -> PostgresIdempotencyStore:
        """Opens a pool and creates the schema and table if needed."""
        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            pool=pool,
            error=lambda: IdempotencyStoreUnavailableError("postgres idempotency store failed"),
            store="idempotency_keys",
            migrations=MIGRATIONS,
        )
        return cls(tables, ttl_s=ttl_s, lease_s=lease_s, clock=clock)

    async def close(self) -> None:
        await self._tables.close()

    async def claim(self, scope: IdempotencyScope, fingerprint: str) -> Claim:
        now = self._clock()
        ids = _ids(scope)

        # Each statement on its own: under READ COMMITTED the read sees what the insert lost
        # to, as inside one transaction, at one round trip each.
        async def work(cur: Cursor) -> Claim:
            await cur.execute(self._q(_CLAIM), (*ids, fingerprint, now + self._lease_s, now))
            if await cur.fetchone() is not None:
                return CLAIMED
            # Under READ COMMITTED the conflicting row is visible once its writer committed.
            await cur.execute(self._q(_READ), ids)
            row = await cur.fetchone()
            if row is None:  # released between the insert and the read: let the caller retry
                return settled(fingerprint, fingerprint, None)
            return settled(fingerprint, str(row[0]), cast("JsonBody | None", row[1]))

        return await self._tables.run_single(work)

    async def complete(self, scope: IdempotencyScope, fingerprint: str, body: JsonBody) -> None:
        expires_at = self._clock() + self._ttl_s
        ids = (*_ids(scope), fingerprint)

        async def work(cur: Cursor) -> None:
            await cur.execute(
                self._q(COMPLETE),
                (Jsonb(body), expires_at, *ids),
            )

        await self._tables.run_single(work)

    @property
    def lease_s(self) -> float:
        return self._lease_s

    @property
    def ttl_s(self) -> float:
        return self._ttl_s

    async def renew(self, scope: IdempotencyScope, fingerprint: str) -> bool:
        now = self._clock()
        ids = (*_ids(scope), fingerprint)

        async def work(cur: Cursor) -> bool:
            await cur.execute(self._q(_RENEW), (now + self._lease_s, *ids, now))
            return await cur.fetchone() is not None

        return await self._tables.run_single(work)

    async def release(self, scope: IdempotencyScope, fingerprint: str) -> None:
        ids = (*_ids(scope), fingerprint)

        async def work(cur: Cursor) -> None:
            await cur.execute(
                self._q(_RELEASE),
                ids,
            )

        await self._tables.run_single(work)

    async def sweep_expired(self, limit: int) -> int:
        now = self._clock() - SWEEP_GRACE_S

        async def work(cur: Cursor) -> int:
            await cur.execute(self._q(_SWEEP), (now, limit))
            return cur.rowcount

        return await self._tables.run_single(work)

    async def forget_subject(self, tenant: str, subject_id: UUID) -> int:
        async def work(cur: Cursor) -> int:
            await cur.execute(self._q(_FORGET), (tenant, subject_id))
            return cur.rowcount

        deleted = await self._run(work)
        if deleted:
            # The deleted rows' bytes stay in the table's pages until the table is rewritten;
            # saved responses live a day at most and expired ones are swept (`idempotency_sweep`),
            # so the table stays small and this is quick.
            await self._tables.rewrite("idempotency_keys")
        return deleted


def _drop_unscoped(conn: psycopg.Connection[Any], schema: str) -> None:
    if conn.execute(_UNSCOPED, (schema,)).fetchone() is not None:
        conn.execute(in_schema("DROP TABLE {schema}.idempotency_keys", schema))


# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one. The
# first is the table as it stood before versioning, a table from before its subject column
# replaced.
MIGRATIONS = (StoreMigration("0001-tables", (_drop_unscoped, _SCHEMA, _EXPIRY_INDEX)),)
