"""The ledger's event store in PostgreSQL, in the `eventsourcing` library's terms.

The library reads its configuration from an env mapping; each store's module builds its own
(`in_memory.event_store`, `sqlite.event_store`, this one), so nothing else spells the names.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sql_names import sql_name


def postgres_env(location: PostgresLocation, *, schema: str | None = None) -> dict[str, str]:
    """PostgreSQL; the tables are `ledger_events` (and `ledger_snapshots`) in `schema`.

    The library's optional stored functions stay off: they are shared by every app in a schema
    and skip the table lock that keeps notification ids in commit order.
    """
    env = location.eventsourcing_env()
    env["POSTGRES_ENABLE_DB_FUNCTIONS"] = "n"
    if schema is not None:
        ensure_schema(location, schema)
        env["POSTGRES_SCHEMA"] = schema
    return env


def ensure_schema(location: PostgresLocation, schema: str) -> None:
    """The library expects the schema to exist already."""
    with psycopg.connect(location.conninfo, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(sql_name(schema)))
        )
