"""Builds the `ImportPositions` store beside the configured event store, like the idempotency
store: in memory with the in-memory ledger, a SQLite file next to `ledger.sqlite`
(`ledger-imports.sqlite`), or a table in the PostgreSQL event store's schema."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from factledger.adapters.in_memory.import_positions import InMemoryImportPositions
from factledger.adapters.sqlite.import_positions import SqliteImportPositions
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import (
    InMemoryEventStoreSettings,
    PostgresEventStoreSettings,
    Settings,
    SqliteEventStoreSettings,
)
from factledger.application.importing.positions import ImportPositions


def import_positions_path(settings: Settings) -> Path:
    ledger = settings.ledger_path()
    return ledger.with_name(f"{ledger.stem}-imports.sqlite")


async def open_import_positions(
    settings: Settings, postgres: PostgresServer, stack: AsyncExitStack
) -> ImportPositions:
    """Opens the store (closed by `stack`)."""
    match settings.event_store:
        case InMemoryEventStoreSettings():
            return InMemoryImportPositions()
        case SqliteEventStoreSettings():
            path = import_positions_path(settings)
            path.parent.mkdir(parents=True, exist_ok=True)
            sqlite = SqliteImportPositions(path)
            stack.callback(sqlite.close)
            return sqlite
        case PostgresEventStoreSettings(schema_name=schema):
            # Imported in the arm: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres.import_positions import PostgresImportPositions

            pg = await PostgresImportPositions.connect(
                postgres.location().conninfo, schema=schema, pool=postgres.pool()
            )
            stack.push_async_callback(pg.close)
            return pg
