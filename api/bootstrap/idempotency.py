"""Builds the `IdempotencyStore` beside the configured event store.

Every API process of a deployment shares its event store, so they share this store too: the
in-memory event store gets the in-memory store (one process), the SQLite one a SQLite file next
to `ledger.sqlite` (which also reads the responses the ledger saved with their events in
`ledger.sqlite` itself), and a PostgreSQL event store a table in its schema. The
durable ones are swept of expired entries in the background until the stack closes.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.api.bootstrap.background import run_until_closed
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import (
    InMemoryEventStoreSettings,
    PostgresEventStoreSettings,
    Settings,
    SqliteEventStoreSettings,
)
from factledger.application.ledger.idempotency_sweep import sweep_forever
from factledger.application.ledger.ports import IdempotencyStore


def idempotency_path(settings: Settings) -> str:
    """`ledger-idempotency.sqlite` beside the SQLite ledger."""
    ledger = settings.ledger_path()
    return str(ledger.with_name(f"{ledger.stem}-idempotency.sqlite"))


async def open_idempotency_store(
    settings: Settings, postgres: PostgresServer, stack: AsyncExitStack
) -> IdempotencyStore:
    """Opens the store (closed by `stack`)."""
    ttl_s, lease_s = settings.api.idempotency_ttl_s, settings.api.idempotency_lease_s
    match settings.event_store:
        case InMemoryEventStoreSettings():
            return InMemoryIdempotencyStore(ttl_s=ttl_s, lease_s=lease_s)
        case SqliteEventStoreSettings():
            settings.ledger_path().parent.mkdir(parents=True, exist_ok=True)
            sqlite = SqliteIdempotencyStore(
                idempotency_path(settings),
                ttl_s=ttl_s,
                lease_s=lease_s,
                responses_with_events=settings.ledger_path(),
            )
            stack.callback(sqlite.close)
            run_until_closed(lambda stop: sweep_forever(sqlite, stop), stack)
            return sqlite
        case PostgresEventStoreSettings(schema_name=schema):
            # Imported in the arm: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore

            location = postgres.location()
            pg = await PostgresIdempotencyStore.connect(
                location.conninfo,
                schema=schema,
                ttl_s=ttl_s,
                lease_s=lease_s,
                pool=postgres.pool(),
            )
            stack.push_async_callback(pg.close)
            run_until_closed(lambda stop: sweep_forever(pg, stop), stack)
            return pg
