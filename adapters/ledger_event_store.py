"""Persistence settings for the ledger's event store, in the `eventsourcing` library's terms.

The library reads its configuration from an env mapping; these helpers build that mapping
for the three stores factledger supports, so nothing else spells the variable names.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg import sql

from factledger.adapters.embedded_postgres import PostgresLocation


def popo_env() -> dict[str, str]:
    """In memory (plain old Python objects): tests, and throwaway demos."""
    return {"PERSISTENCE_MODULE": "eventsourcing.popo"}


def sqlite_env(path: Path) -> dict[str, str]:
    """A SQLite file, the embedded default. The library always names the tables
    `stored_events`, so the file must belong to the ledger alone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(path),
        "SQLITE_LOCK_TIMEOUT": "10",
    }


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
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
