"""Where the ledger and the views live: event stores, PostgreSQL connections, projection views."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
    model_validator,
)

from factledger.api.settings.base import NestedSettings, SqlName
from factledger.api.settings.stores import (
    InProcessStoreSettings,
    PostgresSchemaStoreSettings,
    SqliteFileStoreSettings,
)

# -- event store -------------------------------------------------------------------------------


class InMemoryEventStoreSettings(InProcessStoreSettings):
    """Events in process memory: tests and throwaway runs; gone at exit."""


class SqliteEventStoreSettings(SqliteFileStoreSettings):
    """Events in a SQLite file (the embedded default); default `<data_dir>/ledger.sqlite`."""


class PostgresEventStoreSettings(PostgresSchemaStoreSettings):
    """Events in PostgreSQL (`ledger_events`): `DATABASE_URL`, else the embedded server."""

    schema_name: SqlName = "public"


EventStoreSettings = Annotated[
    InMemoryEventStoreSettings | SqliteEventStoreSettings | PostgresEventStoreSettings,
    Field(discriminator="kind"),
]

# -- PostgreSQL connections -------------------------------------------------------------------


class PostgresSettings(NestedSettings):
    """Pools and timeouts of every PostgreSQL-backed store (events, keys, views, short-term
    memory, idempotency, sync queue, pgvector), e.g. `FACTLEDGER_POSTGRES__STATEMENT_TIMEOUT_S=5`.

    Each store's pool checks a connection before handing it out and replaces one the server
    dropped, so a restarted database is used again within seconds. While it is down,
    a request waits at most `acquire_timeout_s` for a connection, then gets 503.
    """

    # One connection attempt (libpq's `connect_timeout`; it has a 2 s minimum).
    connect_timeout_s: int = Field(default=3, ge=2, le=60)
    # One statement on the server; a runaway query fails instead of holding its connection.
    statement_timeout_s: float = Field(default=10.0, gt=0, le=3600)
    # How long a request waits for a pooled connection before its store reports unavailable.
    acquire_timeout_s: float = Field(default=3.0, gt=0, le=60)
    # How long a pool retries a lost connection in the background (backoff 1 s, 2 s, ...);
    # after it, the next request starts a fresh attempt at once.
    reconnect_timeout_s: float = Field(default=5.0, gt=0, le=600)
    pool_min_size: int = Field(default=1, ge=0, le=64)
    pool_max_size: int = Field(default=4, ge=1, le=64)
    # The event store's pool serves every command and follower thread: it may grow further.
    event_store_pool_max_size: int = Field(default=10, ge=1, le=128)

    @model_validator(mode="after")
    def _sizes_ordered(self) -> PostgresSettings:
        if self.pool_min_size > min(self.pool_max_size, self.event_store_pool_max_size):
            raise ValueError("pool_min_size exceeds a maximum pool size")
        return self


# -- projection views --------------------------------------------------------------------------


class InMemoryViewSettings(InProcessStoreSettings):
    """Views in process memory, rebuilt from the ledger at every start."""


class SqliteViewSettings(SqliteFileStoreSettings):
    """Views in a SQLite file; `path` defaults to `<data_dir>/views.sqlite`."""


class PostgresViewSettings(PostgresSchemaStoreSettings):
    """Views in PostgreSQL (the same database as the events)."""

    schema_name: SqlName = "factledger_views"


ViewSettings = Annotated[
    InMemoryViewSettings | SqliteViewSettings | PostgresViewSettings,
    Field(discriminator="kind"),
]
