"""Read-your-writes between a primary and a hot standby, by write-ahead-log position.

After a write the API reads the primary's current position (`pg_current_wal_lsn()`, past the
commit of everything the request wrote) and hands it to the caller; a read that brings it back
goes to the standby only once the standby has replayed that far (`pg_last_wal_replay_lsn()`),
waiting a bounded moment for it, and otherwise to the primary. A position is libpq's text form
of an LSN (`16/B374D848`), compared by the server as `pg_lsn`.

A standby that does not answer is left alone for `DOWN_FOR_S`: reads go to the primary
meanwhile instead of each paying a connect timeout.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import psycopg
import psycopg_pool
import structlog

from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_async_pool
from factledger.adapters.read_routing import valid_position as valid_position

log = structlog.get_logger(__name__)

DOWN_FOR_S = 2.0
_POLL_S = 0.005
_REPLAYED = "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn"


class ReplayPositions:
    """The primary's write position and the standby's replay position."""

    def __init__(
        self, primary_conninfo: str, standby_conninfo: str, *, pool: PoolOptions = DEFAULT_POOL
    ) -> None:
        small = replace(pool, min_size=0, max_size=max(2, min(pool.max_size, 4)))
        self._primary = healing_async_pool(
            primary_conninfo, small, name="factledger.position.primary", autocommit=True
        )
        self._standby = healing_async_pool(
            standby_conninfo, small, name="factledger.position.standby", autocommit=True
        )
        self._down_until = 0.0

    async def open(self) -> None:
        # Neither waits: a standby (or primary) that is down must not stop the API starting.
        await self._primary.open(wait=False)
        await self._standby.open(wait=False)

    async def close(self) -> None:
        await self._standby.close()
        await self._primary.close()

    async def primary_position(self) -> str | None:
        """The primary's current write position; None when it cannot be read (the write
        itself succeeded: the caller then simply gets no position)."""
        try:
            async with self._primary.connection() as conn:
                cur = await conn.execute("SELECT pg_current_wal_lsn()::text")
                row = await cur.fetchone()
        except (psycopg.Error, psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed) as exc:
            log.warning("replication.position_unread", error_type=type(exc).__name__)
            return None
        return None if row is None else str(row[0])

    async def standby_reached(self, position: str | None, *, wait_s: float) -> bool:
        """Whether the standby answers and has replayed up to `position` (any position when
        None), waiting up to `wait_s` for its replay to get there."""
        if time.monotonic() < self._down_until:
            return False
        deadline = time.monotonic() + wait_s
        try:
            async with self._standby.connection(timeout=max(wait_s, 0.5)) as conn:
                if position is None:
                    cur = await conn.execute("SELECT pg_is_in_recovery()")
                    row = await cur.fetchone()
                    # A standby promoted meanwhile is a primary: its reads are current.
                    return row is not None
                while True:
                    cur = await conn.execute(_REPLAYED, [position])
                    row = await cur.fetchone()
                    if row is not None and row[0] is not False:
                        # NULL: not in recovery (promoted), so it holds every write it got.
                        return True
                    if time.monotonic() >= deadline:
                        return False
                    await asyncio.sleep(_POLL_S)
        except (psycopg.Error, psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed) as exc:
            log.warning("replication.standby_unavailable", error_type=type(exc).__name__)
            self._down_until = time.monotonic() + DOWN_FOR_S
            return False
