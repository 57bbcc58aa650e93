"""The event store's pool checks a connection only after it sat idle, as every other
PostgreSQL pool does (ADR 0013, ADR 0093): a ledger read on a busy path is its own round trips
and no empty statement before each, while a connection idle through a restart is still checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from factledger.adapters import postgres_pool
from factledger.adapters.postgres.event_store import HealingPostgresFactory, postgres_env
from factledger.adapters.postgres_pool import DEFAULT_POOL
from factledger.adapters.postgres_server import PostgresLocation

pytestmark = pytest.mark.integration
READS = 12


class Checks:
    """Counts the pool's connection checks (psycopg_pool's empty statement)."""

    def __init__(self) -> None:
        self.count = 0
        self._real = ConnectionPool.check_connection

    def __call__(self, conn: psycopg.Connection[Any]) -> None:
        self.count += 1
        self._real(conn)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Checks:
    # Patched before the factory is built: the library takes its pre-ping check then.
    counted = Checks()
    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(counted))
    return counted


@pytest.fixture
def factory(postgres: PostgresLocation, checks: Checks) -> Iterator[HealingPostgresFactory]:
    built = HealingPostgresFactory(postgres_env(postgres))
    try:
        yield built
    finally:
        built.close()


def read(factory: HealingPostgresFactory) -> None:
    with factory.datastore.get_connection() as conn:
        conn.execute("SELECT 1")


def test_a_connection_back_within_the_window_is_handed_out_unchecked(
    factory: HealingPostgresFactory, checks: Checks
) -> None:
    for _ in range(READS):
        read(factory)

    # Only a connection the pool never handed out before: at most one per connection.
    assert checks.count <= DEFAULT_POOL.max_size < READS


def test_a_connection_idle_past_the_window_is_checked_before_use(
    factory: HealingPostgresFactory, checks: Checks, monkeypatch: pytest.MonkeyPatch
) -> None:
    read(factory)
    before = checks.count
    later = postgres_pool.monotonic() + postgres_pool.CHECK_AFTER_IDLE_S + 1
    monkeypatch.setattr(postgres_pool, "monotonic", lambda: later)

    read(factory)

    assert checks.count == before + 1
