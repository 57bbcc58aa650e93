"""Rate limits shared by every process of a deployment through PostgreSQL: one row per key in
an unlogged table (the counts need not survive a crash of the server), one `INSERT ... ON
CONFLICT DO UPDATE ... RETURNING` per key, in autocommit; a request's two keys (its principal,
then its tenant) go in one statement, the second counted only when the first admitted: one
round trip per request (`application.rate_limits` has the arithmetic).

Times are the server's clock (`clock_timestamp()`), so processes on hosts whose clocks differ
still count alike. A row whose time has passed is no different from no row; `prune` deletes
those.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.application.rate_limits import Rate, RateStoreUnavailableError, wait_s

_SCHEMA = (
    "CREATE UNLOGGED TABLE IF NOT EXISTS {schema}.rate_limits"
    " (key text PRIMARY KEY, tat float8 NOT NULL, ok boolean NOT NULL)",
)
# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", _SCHEMA),)


def _upsert(key: str, interval: str, tolerance: str, source: str) -> str:
    """One key's check, as an `INSERT ... ON CONFLICT DO UPDATE` over the rows of `source`
    (`clock`, or `clock` joined with an earlier check that must have admitted): `ok` and `tat`
    read the row as it was (every SET sees the old row); `now` is the server's. Built from this
    module's constants and placeholders only."""
    now = "(SELECT now FROM clock)"
    due = " ".join(("greatest(r.tat,", now, ") +", interval))
    admitted = " ".join((due, "-", now, "<=", tolerance))
    return " ".join(
        (
            "INSERT INTO {schema}.rate_limits AS r (key, tat, ok) SELECT",
            key,
            ", clock.now +",
            interval,
            ", true FROM",
            source,
            "ON CONFLICT (key) DO UPDATE SET ok =",
            admitted,
            ", tat = CASE WHEN",
            admitted,
            "THEN",
            due,
            "ELSE r.tat END RETURNING tat, ok",
        )
    )


_CLOCK = "WITH clock AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS now)"
_FIRST = _upsert("%(k1)s", "%(i1)s", "%(t1)s", "clock")
_TAKE = " ".join(
    (
        _CLOCK,
        ", a AS (",
        _FIRST,
        ") SELECT (SELECT now FROM clock), a.tat, a.ok, NULL::float8, NULL::boolean FROM a",
    )
)
# The second key is counted only when the first admitted (its INSERT selects no row else).
_TAKE_THEN = " ".join(
    (
        _CLOCK,
        ", a AS (",
        _FIRST,
        "), b AS (",
        _upsert("%(k2)s", "%(i2)s", "%(t2)s", "clock, a WHERE a.ok"),
        ") SELECT (SELECT now FROM clock), a.tat, a.ok, b.tat, b.ok FROM a LEFT JOIN b ON true",
    )
)
_WAIT = (
    "SELECT tat, extract(epoch FROM clock_timestamp())::float8"
    " FROM {schema}.rate_limits WHERE key = %s"
)
PRUNE_EVERY = 10_000


class PostgresRateStore:
    def __init__(self, tables: PostgresTables) -> None:
        self._tables = tables
        self._take = tables.q(_TAKE)
        self._take_then = tables.q(_TAKE_THEN)
        self._wait = tables.q(_WAIT)
        self._checks = 0

    @classmethod
    async def connect(
        cls, conninfo: str, *, schema: str = "public", pool: PoolOptions = DEFAULT_POOL
    ) -> PostgresRateStore:
        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            pool=pool,
            error=lambda: RateStoreUnavailableError("postgres rate-limit store failed"),
            store="rate_limits",
            migrations=MIGRATIONS,
        )
        return cls(tables)

    async def take(self, key: str, rate: Rate) -> float:
        return (await self._checked(self._take, (key, rate), None))[0]

    async def take_then(
        self, first: tuple[str, Rate], then: tuple[str, Rate]
    ) -> tuple[float, float]:
        return await self._checked(self._take_then, first, then)

    async def _checked(
        self, statement: sql.Composed, first: tuple[str, Rate], then: tuple[str, Rate] | None
    ) -> tuple[float, float]:
        args: dict[str, object] = {}
        for n, (key, rate) in enumerate((first, then) if then else (first,), start=1):
            args |= {f"k{n}": key, f"i{n}": rate.interval_s, f"t{n}": rate.admits_within_s}

        async def work(cur: Cursor) -> tuple[Any, ...]:
            await cur.execute(statement, args)
            row = await cur.fetchone()
            if row is None:  # pragma: no cover - an upsert always returns its row
                raise RateStoreUnavailableError("the rate-limit upsert returned no row")
            return tuple(row)

        now, first_tat, first_ok, then_tat, then_ok = await self._tables.run_single(work)
        self._checks += 1
        if self._checks % PRUNE_EVERY == 0:
            await self.prune()
        if not first_ok:
            return wait_s(float(first_tat), float(now), first[1]), 0.0
        if then is None or then_ok is None or then_ok:
            return 0.0, 0.0
        return 0.0, wait_s(float(then_tat), float(now), then[1])

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
