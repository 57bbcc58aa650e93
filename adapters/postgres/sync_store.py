"""`SyncStore` in PostgreSQL: several worker processes share one queue.

- Feeding locks the position row (`FOR UPDATE`), so two feeders never plan the same batch.
- Claims use `FOR UPDATE SKIP LOCKED` plus a per-subject "no earlier pending item" rule, so each
  item goes to one worker and a subject's items apply in ledger order. Leases use the server's
  clock, so workers on different machines agree on when a lease lapsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.application.sync.ports import SyncStoreUnavailableError
from factledger.application.sync.types import DeadLetter, SyncItem, SyncKind, item_order

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS {schema}.sync_position ("
    " name text PRIMARY KEY, position bigint NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {schema}.sync_items ("
    " item_id text PRIMARY KEY, position bigint NOT NULL, seq integer NOT NULL,"
    " subject_id uuid NOT NULL, kind text NOT NULL, targets text[] NOT NULL,"
    " attempts integer NOT NULL DEFAULT 0, state text NOT NULL DEFAULT 'pending',"
    " available_at timestamptz NOT NULL DEFAULT now(), leased_by text,"
    " leased_until timestamptz, error_type text)",
    "CREATE INDEX IF NOT EXISTS sync_items_pending ON {schema}.sync_items"
    " (subject_id, position, seq) WHERE state = 'pending'",
    # Items queued before the column existed have no tenant: only the listing of every
    # tenant (the operator's) shows them once dead.
    "ALTER TABLE {schema}.sync_items ADD COLUMN IF NOT EXISTS tenant text",
    "CREATE INDEX IF NOT EXISTS sync_items_dead ON {schema}.sync_items"
    " (tenant, position, seq) WHERE state = 'dead'",
)
# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one. The
# queue's tables are shared by every sync store name in the schema; each name has its row.
MIGRATIONS = (StoreMigration("0001-tables", _SCHEMA),)
# The claimable items are the first pending item of each subject, when available and not
# leased. They are found by one pass over the pending index in (subject, position, seq) order,
# not by a NOT EXISTS per pending item: on a queue filled since its last ANALYZE (a burst,
# a drain) the planner costed that anti-join as one row and ran it as a nested loop over the
# whole index for every row, 123 ms a claim at 540 pending items against 0.4 ms for this
# (ADR 0103). The candidates are cut at four times the claim before the row locks, so a claim
# running beside another still finds items past the ones that one is locking.
_CLAIM = """
WITH candidates AS (
    SELECT i.item_id FROM {schema}.sync_items i
    WHERE i.item_id = ANY(ARRAY(
          SELECT h.item_id FROM (
              SELECT DISTINCT ON (p.subject_id) p.item_id, p.position, p.seq,
                     p.available_at, p.leased_until
              FROM {schema}.sync_items p WHERE p.state = 'pending'
              ORDER BY p.subject_id, p.position, p.seq) h
          WHERE h.available_at <= now() AND (h.leased_until IS NULL OR h.leased_until <= now())
          ORDER BY h.position, h.seq
          LIMIT 4 * %(limit)s))
      AND i.state = 'pending' AND i.available_at <= now()
      AND (i.leased_until IS NULL OR i.leased_until <= now())
    ORDER BY i.position, i.seq
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE {schema}.sync_items s
SET leased_by = %(worker)s, leased_until = now() + make_interval(secs => %(lease_s)s)
FROM candidates c WHERE s.item_id = c.item_id
RETURNING s.item_id, s.position, s.seq, s.subject_id, s.kind, s.targets, s.attempts, s.tenant
"""
_DEAD = (
    "SELECT item_id, position, subject_id, kind, targets, attempts, error_type"
    " FROM {schema}.sync_items WHERE state = 'dead' AND (position, seq) > (%s, %s)"
)
_RETRY = (
    "UPDATE {schema}.sync_items SET state = 'pending', attempts = 0,"
    " error_type = NULL, available_at = now()"
    " WHERE state = 'dead' AND (%s::text[] IS NULL OR item_id = ANY(%s::text[]))"
)
# Separate statements rather than `%s IS NULL OR tenant = %s`, so a tenant's listing always
# plans on the `sync_items_dead` index.
_IN_TENANT = " AND tenant = %s"


class PostgresSyncStore:
    """The sync queue in one schema; build it with `await PostgresSyncStore.connect(dsn)`."""

    def __init__(self, tables: PostgresTables, *, name: str) -> None:
        self._tables = tables
        self._q, self._run = tables.q, tables.run
        self._name = name

    @classmethod
    async def connect(
        cls,
        conninfo: str,
        *,
        schema: str = "public",
        name: str = "memory_backend",
        pool: PoolOptions = DEFAULT_POOL,
    ) -> PostgresSyncStore:
        """Opens a small pool and creates the tables and the position row if needed."""

        async def setup(tables: PostgresTables, cur: Cursor) -> None:
            await cur.execute(
                tables.q(
                    "INSERT INTO {schema}.sync_position (name, position) VALUES (%s, 0)"
                    " ON CONFLICT (name) DO NOTHING"
                ),
                (name,),
            )

        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            pool=pool,
            error=lambda: SyncStoreUnavailableError("postgres sync store failed"),
            store="sync",
            migrations=MIGRATIONS,
            setup=setup,
        )
        return cls(tables, name=name)

    async def close(self) -> None:
        await self._tables.close()

    async def position(self) -> int:
        async def work(cur: Cursor) -> int:
            await cur.execute(
                self._q("SELECT position FROM {schema}.sync_position WHERE name = %s"),
                (self._name,),
            )
            row = await cur.fetchone()
            return 0 if row is None else int(row[0])

        return await self._run(work)

    async def enqueue(self, items: Sequence[SyncItem], *, after: int, upto: int) -> bool:
        async def work(cur: Cursor) -> bool:
            await cur.execute(
                self._q("SELECT position FROM {schema}.sync_position WHERE name = %s FOR UPDATE"),
                (self._name,),
            )
            row = await cur.fetchone()
            if row is None or int(row[0]) != after:
                return False
            if items:
                await cur.executemany(
                    self._q(
                        "INSERT INTO {schema}.sync_items"
                        " (item_id, position, seq, subject_id, kind, targets, tenant)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (item_id) DO NOTHING"
                    ),
                    [
                        (
                            i.item_id,
                            i.position,
                            item_order(i.item_id)[1],
                            i.subject_id,
                            i.kind.value,
                            list(i.targets),
                            i.tenant,
                        )
                        for i in items
                    ],
                )
            await cur.execute(
                self._q("UPDATE {schema}.sync_position SET position = %s WHERE name = %s"),
                (upto, self._name),
            )
            return True

        return await self._run(work)

    async def claim(self, worker_id: str, *, limit: int, lease_s: float) -> list[SyncItem]:
        async def work(cur: Cursor) -> list[SyncItem]:
            await cur.execute(
                self._q(_CLAIM), {"limit": limit, "worker": worker_id, "lease_s": lease_s}
            )
            rows = await cur.fetchall()
            rows.sort(key=lambda r: (r[1], r[2]))
            return [
                SyncItem(
                    r[0],
                    int(r[1]),
                    _uuid(r[3]),
                    SyncKind(r[4]),
                    tuple(r[5]),
                    int(r[6]),
                    tenant=r[7] or "",
                )
                for r in rows
            ]

        # One statement that commits on its own (its row locks end with it): no BEGIN and
        # COMMIT round trips per claim.
        return await self._tables.run_single(work)

    async def complete(self, item_id: str) -> None:
        async def work(cur: Cursor) -> None:
            await cur.execute(
                self._q("DELETE FROM {schema}.sync_items WHERE item_id = %s"), (item_id,)
            )

        # One statement that commits on its own: no BEGIN and COMMIT round trips per item.
        await self._tables.run_single(work)

    async def complete_many(self, item_ids: Sequence[str]) -> None:
        if not item_ids:
            return

        async def work(cur: Cursor) -> None:
            await cur.execute(
                self._q("DELETE FROM {schema}.sync_items WHERE item_id = ANY(%s)"),
                (list(item_ids),),
            )

        # A claim's done items in one autocommitted statement (ADR 0094).
        await self._tables.run_single(work)

    async def fail(self, item_id: str, *, error_type: str, retry_in_s: float | None) -> None:
        async def work(cur: Cursor) -> None:
            await cur.execute(
                self._q(
                    "UPDATE {schema}.sync_items SET attempts = attempts + 1, error_type = %s,"
                    " leased_by = NULL, leased_until = NULL,"
                    " state = CASE WHEN %s::float8 IS NULL THEN 'dead' ELSE 'pending' END,"
                    " available_at = now() + make_interval(secs => coalesce(%s::float8, 0))"
                    " WHERE item_id = %s"
                ),
                (error_type, retry_in_s, retry_in_s, item_id),
            )

        await self._run(work)

    async def dead_letters(
        self, *, tenant: str | None = None, after: str | None = None, limit: int = 100
    ) -> list[DeadLetter]:
        start = (-1, -1) if after is None else item_order(after)
        query, params = _DEAD, list[object](start)
        if tenant is not None:
            query, params = query + _IN_TENANT, [*start, tenant]

        async def work(cur: Cursor) -> list[DeadLetter]:
            await cur.execute(self._q(query + " ORDER BY position, seq LIMIT %s"), (*params, limit))
            return [
                DeadLetter(
                    r[0],
                    int(r[1]),
                    _uuid(r[2]),
                    SyncKind(r[3]),
                    tuple(r[4]),
                    int(r[5]),
                    r[6] or "unknown",
                )
                for r in await cur.fetchall()
            ]

        return await self._run(work)

    async def retry_dead(
        self, item_ids: Sequence[str] | None = None, *, tenant: str | None = None
    ) -> int:
        ids = None if item_ids is None else list(item_ids)
        query, params = _RETRY, list[object]([ids, ids])
        if tenant is not None:
            query, params = query + _IN_TENANT, [ids, ids, tenant]

        async def work(cur: Cursor) -> int:
            await cur.execute(self._q(query), params)
            return cur.rowcount

        return await self._run(work)

    async def pending_count(self) -> int:
        async def work(cur: Cursor) -> int:
            await cur.execute(
                self._q("SELECT count(*) FROM {schema}.sync_items WHERE state = 'pending'")
            )
            row = await cur.fetchone()
            return 0 if row is None else int(row[0])

        return await self._run(work)


def _uuid(value: object) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))
