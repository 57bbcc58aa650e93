"""`DeliveryLog` in PostgreSQL, in the event store's schema: positions and attempts survive a
restart, and a dispatcher on another host resumes where the last one stopped."""

from __future__ import annotations

from collections.abc import Sequence

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.application.webhooks.ports import Delivery, DeliveryLogUnavailableError, Outcome

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS {schema}.webhook_positions (
        endpoint text PRIMARY KEY, position bigint NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS {schema}.webhook_deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, endpoint text NOT NULL,
        position bigint NOT NULL, attempt integer NOT NULL, outcome text NOT NULL,
        status integer, error text, at timestamptz NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint "
    "ON {schema}.webhook_deliveries (endpoint, id)",
)
# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", _SCHEMA),)
_INSERT = """INSERT INTO {schema}.webhook_deliveries
    (endpoint, position, attempt, outcome, status, error, at) VALUES (%s, %s, %s, %s, %s, %s, %s)"""
# A position moves forward only: an older attempt recorded late never moves it back.
_ADVANCE = """INSERT INTO {schema}.webhook_positions AS p (endpoint, position) VALUES (%s, %s)
    ON CONFLICT (endpoint) DO UPDATE SET position = greatest(p.position, excluded.position)"""
_POSITION = "SELECT position FROM {schema}.webhook_positions WHERE endpoint = %s"
_LATEST = """SELECT endpoint, position, attempt, outcome, status, error, at
    FROM {schema}.webhook_deliveries WHERE endpoint = %s ORDER BY id DESC LIMIT %s"""


class PostgresDeliveryLog:
    """Build it with `await PostgresDeliveryLog.connect(dsn, schema=...)`."""

    def __init__(self, tables: PostgresTables) -> None:
        self._tables = tables

    @classmethod
    async def connect(
        cls, conninfo: str, *, schema: str = "public", pool: PoolOptions = DEFAULT_POOL
    ) -> PostgresDeliveryLog:
        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            pool=pool,
            error=lambda: DeliveryLogUnavailableError("postgres delivery log failed"),
            store="webhook_deliveries",
            migrations=MIGRATIONS,
        )
        return cls(tables)

    async def position(self, endpoint: str) -> int:
        async def work(cur: Cursor) -> int:
            await cur.execute(self._tables.q(_POSITION), (endpoint,))
            row = await cur.fetchone()
            return 0 if row is None else int(row[0])

        return await self._tables.run(work)

    async def record(self, delivery: Delivery, *, advance_to: int | None) -> None:
        d = delivery
        row = (d.endpoint, d.position, d.attempt, d.outcome.value, d.status, d.error, d.at)

        async def work(cur: Cursor) -> None:
            # One transaction: the attempt and the position it earned are kept together.
            await cur.execute(self._tables.q(_INSERT), row)
            if advance_to is not None:
                await cur.execute(self._tables.q(_ADVANCE), (d.endpoint, advance_to))

        await self._tables.run(work)

    async def deliveries(self, endpoint: str, *, limit: int) -> Sequence[Delivery]:
        async def work(cur: Cursor) -> list[Delivery]:
            await cur.execute(self._tables.q(_LATEST), (endpoint, limit))
            return [
                Delivery(str(e), int(p), int(a), Outcome(o), s, err, at)
                for e, p, a, o, s, err, at in await cur.fetchall()
            ]

        return await self._tables.run(work)

    async def close(self) -> None:
        await self._tables.close()
