"""Connection pools that survive a PostgreSQL restart, for every PostgreSQL-backed adapter.

Each pool hands out only connections that answer (`check`: one empty statement, for a
connection idle longer than `CHECK_AFTER_IDLE_S`), so a connection the server dropped is
replaced, never given to a caller; and every wait is bounded:

- `connect_timeout_s`: one connection attempt (libpq's `connect_timeout`, 2 s at least);
- `statement_timeout_s`: one statement on the server (`statement_timeout`);
- `acquire_timeout_s`: a caller waiting for a pooled connection; past it the store raises its
  "unavailable" error, which the API answers with 503, instead of queueing behind an outage;
- `reconnect_timeout_s`: how long the pool keeps retrying a lost connection in the background
  (with exponential backoff) before it stops and lets the next caller start a fresh attempt.
  Kept short so that the backoff never grows past a few seconds: a database that comes back
  is used at the next request, not after a minute-long sleep.

The technologies share this module (`adapters/postgres`, `adapters/pgvector`), as they share
`sql_names`; neither imports the other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from time import monotonic
from typing import Any
from weakref import WeakKeyDictionary

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from factledger.adapters.postgres_options import DEFAULT_POOL as DEFAULT_POOL
from factledger.adapters.postgres_options import MIN_CONNECT_TIMEOUT_S as MIN_CONNECT_TIMEOUT_S
from factledger.adapters.postgres_options import PoolOptions as PoolOptions

# A connection back in the pool for less than this is handed out unchecked (HikariCP's
# "alive bypass window"): a busy hot path pays no extra round trip per checkout, while one that
# sat idle through a database restart is checked. One dropped within the window fails its one
# caller, and the pool replaces it when it comes back.
CHECK_AFTER_IDLE_S = 1.0


class _IdleChecks:
    """When each connection of one pool was last returned; the pool's `check` and `reset`."""

    def __init__(self) -> None:
        self._returned: WeakKeyDictionary[object, float] = WeakKeyDictionary()

    def mark(self, conn: object) -> None:
        self._returned[conn] = monotonic()

    def needs_check(self, conn: object) -> bool:
        returned = self._returned.get(conn)
        return returned is None or monotonic() - returned >= CHECK_AFTER_IDLE_S

    def check(self, conn: psycopg.Connection[Any]) -> None:
        if self.needs_check(conn):
            ConnectionPool.check_connection(conn)

    async def check_async(self, conn: psycopg.AsyncConnection[Any]) -> None:
        if self.needs_check(conn):
            await AsyncConnectionPool.check_connection(conn)

    async def mark_async(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.mark(conn)


def healing_pool(
    conninfo: str,
    options: PoolOptions,
    *,
    name: str,
    autocommit: bool = True,
) -> ConnectionPool[psycopg.Connection[tuple[Any, ...]]]:
    """A closed (not yet opened) pool for threads; call `open()` or `open(wait=True)`."""
    idle = _IdleChecks()
    return ConnectionPool(
        conninfo,
        min_size=options.min_size,
        max_size=options.max_size,
        kwargs=options.connection_kwargs(autocommit=autocommit),
        check=idle.check,
        reset=idle.mark,
        timeout=options.acquire_timeout_s,
        reconnect_timeout=options.reconnect_timeout_s,
        name=name,
        open=False,
    )


def healing_async_pool(
    conninfo: str,
    options: PoolOptions,
    *,
    name: str,
    autocommit: bool = False,
    extra_options: str = "",
    configure: Callable[[psycopg.AsyncConnection[Any]], Awaitable[None]] | None = None,
) -> AsyncConnectionPool[psycopg.AsyncConnection[tuple[Any, ...]]]:
    """A closed (not yet opened) pool for the event loop; `await pool.open(wait=True)`."""
    idle = _IdleChecks()
    return AsyncConnectionPool(
        conninfo,
        min_size=options.min_size,
        max_size=options.max_size,
        kwargs=options.connection_kwargs(autocommit=autocommit, extra_options=extra_options),
        check=idle.check_async,
        reset=idle.mark_async,
        configure=configure,
        timeout=options.acquire_timeout_s,
        reconnect_timeout=options.reconnect_timeout_s,
        name=name,
        open=False,
    )
