"""The PostgreSQL stores' migrations, started side by side before the stores open.

A runtime opens its stores one after another, and on a new database each of them migrated
its tables as it opened: a PostgreSQL start waited on the database for every store in turn
(docs/benchmarks.md). The stores are listed here as the runtime will open them (the same
schemas, store names and migrations), so `migrate_ahead` can run one thread per schema while
the ledger opens; each store then takes its migration's result when it opens. A store left
out of this list still migrates as it opens, as before: the list saves time, it is never
what makes a store's tables exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.bootstrap.runtime import Needs
from factledger.api.settings import (
    PostgresEventStoreSettings,
    PostgresSessionBufferSettings,
    PostgresSyncStoreSettings,
    PostgresViewSettings,
    Settings,
)

if TYPE_CHECKING:  # the driver is imported only where a PostgreSQL store is configured
    from factledger.adapters.postgres.migrations import MigrationsAhead, StoreTables


def postgres_store_tables(settings: Settings, needs: Needs) -> list[StoreTables]:
    """The PostgreSQL stores `open_runtime(settings, needs)` opens, with their migrations."""
    from factledger.adapters.postgres import (
        idempotency_store,
        import_positions,
        key_store,
        queue_store,
        rate_store,
        session_buffer,
        sync_store,
        view_store,
    )
    from factledger.adapters.postgres.migrations import StoreTables

    tables: list[StoreTables] = []
    if isinstance(settings.event_store, PostgresEventStoreSettings):
        schema = settings.event_store.schema_name
        tables.append(StoreTables(schema, "keys", key_store.MIGRATIONS))
        if needs.idempotency:
            tables.append(StoreTables(schema, "idempotency_keys", idempotency_store.MIGRATIONS))
        if needs.imports:
            tables.append(StoreTables(schema, "import_positions", import_positions.MIGRATIONS))
        limits = settings.api.rate_limit
        if needs.rate_limits and limits.enabled and limits.store != "process":
            tables.append(StoreTables(schema, "rate_limits", rate_store.MIGRATIONS))
    if isinstance(settings.views, PostgresViewSettings):
        schema = settings.views.schema_name
        tables.append(StoreTables(schema, "views", view_store.MIGRATIONS))
        tables.append(StoreTables(schema, "review_queue", queue_store.MIGRATIONS))
    if needs.sessions and isinstance(settings.short_term, PostgresSessionBufferSettings):
        schema = settings.short_term.schema_name
        tables.append(StoreTables(schema, "session_buffer", session_buffer.MIGRATIONS))
    if isinstance(settings.sync.store, PostgresSyncStoreSettings):
        tables.append(StoreTables(settings.sync.store.schema_name, "sync", sync_store.MIGRATIONS))
    return tables


def start_migrations_ahead(
    settings: Settings, postgres: PostgresServer, needs: Needs
) -> MigrationsAhead | None:
    """Starts the migrations of the PostgreSQL stores the runtime will open (None without
    any); the caller discards what no store took once the runtime is open."""
    if not _any_postgres_store(settings):
        return None
    from factledger.adapters.postgres.migrations import migrate_ahead

    tables = postgres_store_tables(settings, needs)
    if not tables:
        return None
    return migrate_ahead(postgres.location().conninfo, tables, pool=postgres.pool())


def _any_postgres_store(settings: Settings) -> bool:
    stores = (settings.event_store, settings.views, settings.short_term, settings.sync.store)
    kinds = (
        PostgresEventStoreSettings,
        PostgresViewSettings,
        PostgresSessionBufferSettings,
        PostgresSyncStoreSettings,
    )
    return any(isinstance(store, kinds) for store in stores)
