"""A process that opens a store on tables that are already there runs none of their DDL, so it
waits for no write in flight (issue 19: a replacement API process started while the other
served traffic; its `CREATE INDEX IF NOT EXISTS` queued behind the writers and held up every
write after it, and a session end died in the deadlock that followed).

Each store is opened once to create its tables; then another connection holds every table of
the schema the way a writer does (`ROW EXCLUSIVE`, what an insert takes) while the store is
opened again. The second open must finish while those locks are held."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.postgres.delivery_log import PostgresDeliveryLog
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.import_positions import PostgresImportPositions
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.ledger import Ledger

pytestmark = pytest.mark.integration

Opener = Callable[[PostgresLocation, str], None]
HOLD_FOR_S = 20.0  # far longer than an open that waits for nothing takes


def _ledger(location: PostgresLocation, schema: str) -> None:
    Ledger(postgres_env(location, schema=schema)).close()


def _keys(location: PostgresLocation, schema: str) -> None:
    PostgresKeyStore(location.conninfo, schema=schema).close()


def _views(location: PostgresLocation, schema: str) -> None:
    PostgresViewStore(location.conninfo, "profile", schema=schema).close()


def _async(connect: Callable[[str, str], object]) -> Opener:
    def opens(location: PostgresLocation, schema: str) -> None:
        async def run() -> None:
            store = await connect(location.conninfo, schema)  # type: ignore[misc]
            await store.close()

        asyncio.run(run())

    return opens


OPENERS: dict[str, Opener] = {
    "ledger": _ledger,
    "keys": _keys,
    "views": _views,
    "session buffer": _async(lambda c, s: PostgresSessionBuffer.connect(c, schema=s)),
    "sync queue": _async(lambda c, s: PostgresSyncStore.connect(c, schema=s)),
    "webhook deliveries": _async(lambda c, s: PostgresDeliveryLog.connect(c, schema=s)),
    "idempotency keys": _async(lambda c, s: PostgresIdempotencyStore.connect(c, schema=s)),
    "import positions": _async(lambda c, s: PostgresImportPositions.connect(c, schema=s)),
}


@pytest.mark.parametrize("store", list(OPENERS))
def test_a_store_opened_again_waits_for_no_writer(postgres: PostgresLocation, store: str) -> None:
    opens = OPENERS[store]
    schema = f"open_{uuid.uuid4().hex[:10]}"
    opens(postgres, schema)
    with psycopg.connect(postgres.conninfo) as writer:
        tables = [
            str(row[0])
            for row in writer.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
            ).fetchall()
        ]
        assert len(tables) > 1  # the store's own, and the marks of what has run
        held = sql.SQL(", ").join(sql.Identifier(schema, t) for t in tables)
        writer.execute(sql.SQL("LOCK TABLE {} IN ROW EXCLUSIVE MODE").format(held))

        opened = threading.Event()
        errors: list[BaseException] = []

        def open_again() -> None:
            try:
                opens(postgres, schema)
                opened.set()
            except BaseException as error:  # collected: a thread's exception is otherwise lost
                errors.append(error)

        thread = threading.Thread(target=open_again, daemon=True)
        thread.start()
        finished_while_held = opened.wait(HOLD_FOR_S)
        writer.rollback()  # lets a blocked open through, so the thread ends either way
        thread.join(timeout=60)
    assert errors == []
    assert finished_while_held, f"the {store} waited for the writer's locks"
