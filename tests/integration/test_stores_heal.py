"""Every PostgreSQL store heals by itself when its database comes back, and fails fast while
it is away (ADR 0013).

Each test gets a database of its own on the session's embedded server and cuts it off as a
restart would: new connections are refused and open ones terminated. While it is cut off, a
call raises the store's "unavailable" error within its pool's wait; once connections are
allowed again, the same store object (never reopened) serves within a few seconds. The key and
view stores used to hold one connection for life and stayed broken until a process restart.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_pool import PoolOptions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import StorageReadOnlyError, StoreUnavailableError
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.ledger.ledger import Ledger
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.projections.follower import max_position

pytestmark = [pytest.mark.integration, pytest.mark.serial]

T = TypeVar("T")
POOL = PoolOptions(acquire_timeout_s=1.0, reconnect_timeout_s=2.0, statement_timeout_s=5.0)
# A call while the database is away waits for a connection at most `acquire_timeout_s`; the
# margin covers a connection attempt and a loaded machine.
FAIL_WITHIN_S = POOL.acquire_timeout_s + 3.0
HEAL_WITHIN_S = 10.0


@pytest.fixture
def database(postgres: PostgresLocation) -> Iterator[PostgresLocation]:
    name = f"heal_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield dataclasses.replace(postgres, dbname=name)
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def set_allowed(postgres: PostgresLocation, database: PostgresLocation, *, allowed: bool) -> None:
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        name = sql.Identifier(database.dbname)
        flag = sql.SQL("true" if allowed else "false")
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(name, flag))
        if not allowed:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (database.dbname,),
            )


def fails_fast(call: Callable[[], object]) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError):
        call()
    assert time.monotonic() - started < FAIL_WITHIN_S


def heals(call: Callable[[], T]) -> T:
    """`call`'s result once it succeeds; fails the test if it does not within the bound."""
    deadline = time.monotonic() + HEAL_WITHIN_S
    while True:
        try:
            return call()
        except StorageReadOnlyError:
            raise  # a read-only database does not heal by waiting: the caller is told at once
        except StoreUnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def outage_and_back(
    postgres: PostgresLocation, database: PostgresLocation, call: Callable[[], T]
) -> T:
    call()
    set_allowed(postgres, database, allowed=False)
    fails_fast(call)
    set_allowed(postgres, database, allowed=True)
    return heals(call)


def run(make: Callable[[], Awaitable[T]]) -> Callable[[], T]:
    return lambda: asyncio.run(make())


def test_the_key_store_heals(postgres: PostgresLocation, database: PostgresLocation) -> None:
    keys = PostgresKeyStore(database.conninfo, pool=POOL)
    try:
        first = keys.current("subject-1")
        assert outage_and_back(postgres, database, lambda: keys.current("subject-1")) == first
    finally:
        keys.close()


def test_the_view_store_heals(postgres: PostgresLocation, database: PostgresLocation) -> None:
    views = PostgresViewStore(database.conninfo, "profile", pool=POOL)
    try:
        with views.transaction() as txn:
            txn.put("profile", "subject-1", {"name": "x"})
            txn.advance(1)
        assert outage_and_back(postgres, database, views.position) == 1
    finally:
        views.close()


def test_the_event_store_heals(postgres: PostgresLocation, database: PostgresLocation) -> None:
    with Ledger(postgres_env(database, pool=POOL), keys=InMemoryKeyStore()) as ledger:
        ledger.register_subject(RegisterSubject("acme", "lead", "lead-1"))
        refs = iter(range(100))

        def register() -> object:
            return ledger.register_subject(RegisterSubject("acme", "lead", f"lead-{next(refs)}"))

        outage_and_back(postgres, database, register)
        assert max_position(ledger) >= 2


def test_the_pooled_stores_heal(postgres: PostgresLocation, database: PostgresLocation) -> None:
    # One event loop per call, as each pool is bound to the loop that opened it.
    async def scenario() -> None:
        buffer = await PostgresSessionBuffer.connect(database.conninfo, pool=POOL)
        idempotency = await PostgresIdempotencyStore.connect(database.conninfo, pool=POOL)
        sync = await PostgresSyncStore.connect(database.conninfo, pool=POOL)
        calls: list[Callable[[], Awaitable[object]]] = [
            lambda: buffer.get(SessionKey(uuid.UUID(int=1), SessionId("s-1"))),
            lambda: idempotency.claim(
                IdempotencyScope("t1", "agent-1", uuid.UUID(int=1), "k-1"), "f"
            ),
            sync.position,
        ]
        try:
            for call in calls:
                await call()
            set_allowed(postgres, database, allowed=False)
            for call in calls:
                started = time.monotonic()
                with pytest.raises(StoreUnavailableError):
                    await call()
                assert time.monotonic() - started < FAIL_WITHIN_S
            set_allowed(postgres, database, allowed=True)
            deadline = time.monotonic() + HEAL_WITHIN_S
            for call in calls:
                while True:
                    try:
                        await call()
                        break
                    except StoreUnavailableError:
                        assert time.monotonic() < deadline
                        await asyncio.sleep(0.2)
        finally:
            for store in (buffer, idempotency, sync):
                await store.close()

    asyncio.run(scenario())


def test_a_read_only_database_is_a_storage_error(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    """A standby after a failover, or `default_transaction_read_only`: 25006, a 503 that says
    so (the event store used to let the library's `InternalError` escape: a 500)."""
    keys = PostgresKeyStore(database.conninfo, pool=POOL)
    with Ledger(postgres_env(database, pool=POOL), keys=keys) as ledger:
        ledger.register_subject(RegisterSubject("acme", "lead", "lead-1"))
        with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
            name = sql.Identifier(database.dbname)
            admin.execute(
                sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(name)
            )
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (database.dbname,),
            )
        with pytest.raises(StorageReadOnlyError):
            heals(lambda: ledger.register_subject(RegisterSubject("acme", "lead", "lead-2")))
        with pytest.raises(StorageReadOnlyError):
            heals(lambda: keys.current("subject-2"))
        # Reads still work, once the event store's pool has replaced the terminated connections.
        assert heals(lambda: max_position(ledger)) == 1
    keys.close()
