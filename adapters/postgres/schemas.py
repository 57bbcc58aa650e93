"""Creating a schema from processes that start together.

`CREATE SCHEMA IF NOT EXISTS` is not safe against itself: two sessions that both find the name
free both insert it, and the second fails on `pg_namespace`'s unique index (two sync workers
started at once on a fresh database did). A transaction-level advisory lock on the name, taken
first, serialises them; the second then finds the schema.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

# Parameter: the schema's name. Held until the caller's transaction ends.
LOCK_SCHEMA = "SELECT pg_advisory_xact_lock(hashtextextended('factledger.schema:' || %s, 0))"


def create_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    """Creates `schema` if it is missing, in a transaction (a savepoint in the caller's)."""
    with conn.transaction():
        conn.execute(LOCK_SCHEMA, (schema,))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
