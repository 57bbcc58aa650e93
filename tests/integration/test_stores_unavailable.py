"""Every PostgreSQL store reports a database it cannot reach as its port's member of the
`StoreUnavailableError` family (the API's 503), never as a driver error.

Each test gets a database of its own on the embedded server, opens a store on it, then cuts the
database off: new connections are refused and the store's open ones are terminated, as when
the server restarts or fails over.
"""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

import psycopg
import pytest
from support.outage import cut_off, own_database

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.postgres.delivery_log import PostgresDeliveryLog
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.event_store_errors import EventStoreUnavailableError
from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import (
    IdempotencyStoreUnavailableError,
    KeyStoreUnavailableError,
    ViewStoreUnavailableError,
)
from factledger.application.sessions.types import (
    SessionBufferUnavailableError,
    SessionId,
    SessionKey,
)
from factledger.application.sync.ports import SyncStoreUnavailableError
from factledger.application.webhooks.ports import DeliveryLogUnavailableError

pytestmark = pytest.mark.integration

# Nothing listens on port 1; libpq fails at once rather than after the connect timeout.
UNREACHABLE = "host=127.0.0.1 port=1 dbname=factledger user=factledger connect_timeout=2"

SUBJECT = UUID("00000000-0000-0000-0000-00000000000a")


@pytest.fixture
def database(postgres: PostgresLocation) -> Iterator[PostgresLocation]:
    with own_database(postgres, "outage") as database:
        yield database


def assert_driver_cause(error: pytest.ExceptionInfo[StoreUnavailableError]) -> None:
    assert isinstance(error.value.__cause__, psycopg.Error)


async def test_the_session_buffer_reports_a_lost_database(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    buffer = await PostgresSessionBuffer.connect(database.conninfo)
    try:
        cut_off(postgres, database)
        with pytest.raises(SessionBufferUnavailableError) as error:
            await buffer.get(SessionKey(SUBJECT, SessionId("s-1")))
        assert_driver_cause(error)
    finally:
        await buffer.close()


async def test_the_idempotency_store_reports_a_lost_database(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    store = await PostgresIdempotencyStore.connect(database.conninfo)
    try:
        cut_off(postgres, database)
        with pytest.raises(IdempotencyStoreUnavailableError) as error:
            await store.claim(IdempotencyScope("t1", "agent-1", SUBJECT, "key-1"), "fingerprint")
        assert_driver_cause(error)
    finally:
        await store.close()


async def test_the_sync_store_reports_a_lost_database(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    store = await PostgresSyncStore.connect(database.conninfo)
    try:
        cut_off(postgres, database)
        with pytest.raises(SyncStoreUnavailableError) as error:
            await store.dead_letters()
        assert_driver_cause(error)
    finally:
        await store.close()


async def test_the_webhook_delivery_log_reports_a_lost_database(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    log = await PostgresDeliveryLog.connect(database.conninfo)
    try:
        cut_off(postgres, database)
        with pytest.raises(DeliveryLogUnavailableError) as error:
            await log.position("crm")
        assert_driver_cause(error)
    finally:
        await log.close()


def test_the_key_store_reports_a_lost_database(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    keys = PostgresKeyStore(database.conninfo)
    try:
        cut_off(postgres, database)
        with pytest.raises(KeyStoreUnavailableError) as error:
            keys.current("subject-1")
        assert_driver_cause(error)
        with pytest.raises(KeyStoreUnavailableError) as error:
            keys.keys_by_id(["0" * 32])
        assert_driver_cause(error)
    finally:
        keys.close()


def test_the_view_store_reports_a_lost_database(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    views = PostgresViewStore(database.conninfo, "profile")
    try:
        cut_off(postgres, database)
        with pytest.raises(ViewStoreUnavailableError) as error, views.read() as txn:
            txn.get("profile", "subject-1")
        assert_driver_cause(error)
    finally:
        views.close()


def test_the_key_and_view_stores_report_a_server_they_cannot_reach() -> None:
    with pytest.raises(KeyStoreUnavailableError) as key_error:
        PostgresKeyStore(UNREACHABLE)
    assert_driver_cause(key_error)
    with pytest.raises(ViewStoreUnavailableError) as view_error:
        PostgresViewStore(UNREACHABLE, "profile")
    assert_driver_cause(view_error)


def test_the_event_store_reports_a_lost_database(
    postgres: PostgresLocation, database: PostgresLocation
) -> None:
    env = {**postgres_env(database), "POSTGRES_CONNECT_TIMEOUT": "1"}
    with Ledger(env, keys=InMemoryKeyStore()) as ledger:
        ledger.register_subject(RegisterSubject("acme", "lead", "lead-1"))
        cut_off(postgres, database)
        with pytest.raises(EventStoreUnavailableError):
            ledger.register_subject(RegisterSubject("acme", "lead", "lead-2"))
