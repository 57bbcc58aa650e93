"""The event store's pool checks a connection before handing it out unless the connection was
handed out within `CHECK_AFTER_IDLE_S` and nothing waits on its socket
(`postgres_pool.check_unless_quiet`): a busy ledger read skips the empty statement, and a
connection whose server end went away is still checked and replaced, never given to a caller.

The window is widened to a minute here, so a slow machine cannot turn a busy pool into an
idle one between two reads.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from factledger.adapters import postgres_pool
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_pool import PoolOptions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger

pytestmark = pytest.mark.integration

TENANT = "acme"
# One connection: every read takes the same one, so the checks counted are that connection's.
POOL = PoolOptions(min_size=1, max_size=1, acquire_timeout_s=5.0)
GONE_WITHIN_S = 10.0  # a terminated backend's exit, on an idle embedded server


class CountedChecks:
    """The pools' empty-statement check, counted."""

    def __init__(self) -> None:
        self.calls = 0
        self._check = ConnectionPool.check_connection

    def __call__(self, conn: Any) -> None:
        self.calls += 1
        self._check(conn)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> CountedChecks:
    counted = CountedChecks()
    monkeypatch.setattr(ConnectionPool, "check_connection", counted)
    monkeypatch.setattr(postgres_pool, "CHECK_AFTER_IDLE_S", 60.0)
    return counted


@pytest.fixture
def ledger(postgres: PostgresLocation) -> Iterator[Ledger]:
    keys = PostgresKeyStore(postgres.conninfo, schema=f"keys_{uuid4().hex[:12]}")
    env = postgres_env(postgres, schema=f"ledger_{uuid4().hex[:12]}", pool=POOL)
    try:
        with Ledger(env, keys=keys) as ledger:
            yield ledger
    finally:
        keys.close()


def pool_of(ledger: Ledger) -> Any:
    return ledger.recorder.datastore.pool  # type: ignore[attr-defined]


def read(ledger: Ledger, subject_id: UUID) -> None:
    assert ledger.recorder.select_events(subject_id, limit=1)


def test_reads_in_a_row_skip_the_check(ledger: Ledger, checks: CountedChecks) -> None:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-1")).subject_id
    read(ledger, subject_id)
    before = checks.calls
    for _ in range(5):
        read(ledger, subject_id)
    assert checks.calls == before


def test_a_connection_whose_backend_ended_is_checked_and_replaced(
    ledger: Ledger, checks: CountedChecks, postgres: PostgresLocation
) -> None:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-1")).subject_id
    read(ledger, subject_id)
    with pool_of(ledger).connection() as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()["pg_backend_pid"]
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + GONE_WITHIN_S
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the terminated backend never ended"
            time.sleep(0.05)
    before = checks.calls
    lost = pool_of(ledger).get_stats().get("connections_lost", 0)

    read(ledger, subject_id)  # within the window, on the pool's only connection

    assert checks.calls > before
    assert pool_of(ledger).get_stats().get("connections_lost", 0) == lost + 1
