"""Rate limits shared by every process of a deployment through PostgreSQL: one row per key in
an unlogged table (the counts need not survive a crash of the server), one `INSERT ... ON
CONFLICT DO UPDATE ... RETURNING` per check, in autocommit: one round trip
(`application.rate_limits` has the arithmetic).

Times are the server's clock (`clock_timestamp()`), so processes on hosts whose clocks differ
still count alike. A row whose time has passed is no different from no row; `prune` deletes
those.
"""

from __future__ import annotations

from factledger.adapters.postgres.schemas import ddl_version
from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.application.rate_limits import Rate, RateStoreUnavailableError, wait_s

_SCHEMA = (
    "CREATE UNLOGGED TABLE IF NOT EXISTS {schema}.rate_limits"
    " (key text PRIMARY KEY, tat float8 NOT NULL, ok boolean NOT NULL)",
)
# `ok` and `tat` read the row as it was (every SET sees the old row); `now` is the server's.
_TAKE = """
WITH clock AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS now)
INSERT INTO {schema}.rate_limits AS r (key, tat, ok)
SELECT %(key)s, now + %(interval)s, true FROM clock
ON CONFLICT (key) DO UPDATE SET
  ok = greatest(r.tat, (SELECT now FROM clock)) + %(interval)s - (SELECT now FROM clock)
       <= %(tolerance)s,
  tat = CASE WHEN greatest(r.tat, (SELECT now FROM clock)) + %(interval)s
                  - (SELECT now FROM clock) <= %(tolerance)s
        THEN greatest(r.tat, (SELECT now FROM clock)) + %(interval)s ELSE r.tat END
RETURNING tat, ok, (SELECT now FROM clock)
"""
_WAIT = (
    "SELECT tat, extract(epoch FROM clock_timestamp())::float8"
    " FROM {schema}.rate_limits WHERE key = %s"
)
PRUNE_EVERY = 10_000


class PostgresRateStore:
    def __init__(self, tables: PostgresTables) -> None:
        self._tables = tables
        self._take = tables.q(_TAKE)
        self._wait = tables.q(_WAIT)
        self._checks = 0

    @classmethod
    async def connect(
        cls, conninfo: str, *, schema: str = "public", pool: PoolOptions = DEFAULT_POOL
    ) -> PostgresRateStore:
        async def create(tables: PostgresTables, cur: Cursor) -> None:
            for statement in _SCHEMA:
                await cur.execute(tables.q(statement))

        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            pool=pool,
            error=lambda: RateStoreUnavailableError("postgres rate-limit store failed"),
            create=create,
            ddl=("rate_limits", ddl_version(*_SCHEMA)),
        )
        return cls(tables)

    async def take(self, key: str, rate: Rate) -> float:
        args = {"key": key, "interval": rate.interval_s, "tolerance": rate.admits_within_s}

        async def work(cur: Cursor) -> tuple[float, bool, float]:
            await cur.execute(self._take, args)
            row = await cur.fetchone()
            if row is None:  # pragma: no cover - an upsert always returns its row
                raise RateStoreUnavailableError("the rate-limit upsert returned no row")
            return float(row[0]), bool(row[1]), float(row[2])

        tat, ok, now = await self._tables.run_single(work)
        self._checks += 1
        if self._checks % PRUNE_EVERY == 0:
            await self.prune()
        return 0.0 if ok else wait_s(tat, now, rate)

    async def wait_s(self, key: str, rate: Rate) -> float:
        async def work(cur: Cursor) -> tuple[float, float] | None:
            await cur.execute(self._wait, (key,))
            row = await cur.fetchone()
            return None if row is None else (float(row[0]), float(row[1]))

        found = await self._tables.run_single(work)
        return 0.0 if found is None else wait_s(found[0], found[1], rate)

    async def prune(self) -> int:
        """Deletes the rows whose time has passed; returns how many."""

        async def work(cur: Cursor) -> int:
            await cur.execute(
                self._tables.q(
                    "DELETE FROM {schema}.rate_limits"
                    " WHERE tat < extract(epoch FROM clock_timestamp())::float8"
                )
            )
            return cur.rowcount

        return await self._tables.run_single(work)

    async def close(self) -> None:
        await self._tables.close()
