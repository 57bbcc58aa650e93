"""Builds the store of the API's rate limits beside the configured event store, so every API
process of a deployment counts in one place: a SQLite file beside `ledger.sqlite`, or a table in
the PostgreSQL event store's schema. The in-memory event store (one process) and
`store=process` count in each process (None here)."""

from __future__ import annotations

from contextlib import AsyncExitStack

from factledger.adapters.sqlite.rate_store import SqliteRateStore
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import (
    PostgresEventStoreSettings,
    Settings,
    SqliteEventStoreSettings,
)
from factledger.application.rate_limits import RateStore


def limits_path(settings: Settings) -> str:
    """`limits.sqlite` beside the SQLite ledger."""
    return str(settings.ledger_path().with_name("limits.sqlite"))


async def open_rate_store(
    settings: Settings, postgres: PostgresServer, stack: AsyncExitStack
) -> RateStore | None:
    """Opens the shared store (closed by `stack`), or None when each process counts alone."""
    limits = settings.api.rate_limit
    if not limits.enabled or limits.store == "process":
        return None
    match settings.event_store:
        case SqliteEventStoreSettings():
            settings.ledger_path().parent.mkdir(parents=True, exist_ok=True)
            sqlite = SqliteRateStore(limits_path(settings))
            stack.callback(sqlite.close)
            return sqlite
        case PostgresEventStoreSettings(schema_name=schema):
            # Imported in the arm: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres.rate_store import PostgresRateStore

            pg = await PostgresRateStore.connect(
                postgres.location().conninfo, schema=schema, pool=postgres.pool()
            )
            stack.push_async_callback(pg.close)
            return pg
        case _:
            return None
