"""Creating a schema and its tables from processes that start together.

`CREATE SCHEMA IF NOT EXISTS` and `CREATE TABLE IF NOT EXISTS` are not safe against
themselves: two sessions that both find a name free both insert it, and the second fails on a
catalogue's unique index (`pg_namespace` when two sync workers started at once on a fresh
database; `pg_type` when both API processes of `serve --workers 2` created the view store's
tables). An advisory lock on the schema's name, taken first and held until the last table
exists, serialises them; the second then finds everything there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

# Parameter: the schema's name. Held until the caller's transaction ends.
LOCK_SCHEMA = "SELECT pg_advisory_xact_lock(hashtextextended('factledger.schema:' || %s, 0))"
# The same lock, held by a session (the same key: each excludes the other).
_LOCK_SCHEMA_SESSION = "SELECT pg_advisory_lock(hashtextextended('factledger.schema:' || %s, 0))"
_UNLOCK_SCHEMA_SESSION = (
    "SELECT pg_advisory_unlock(hashtextextended('factledger.schema:' || %s, 0))"
)


def create_schema(
    conn: psycopg.Connection[Any], schema: str, *tables: sql.SQL | sql.Composed
) -> None:
    """Creates `schema` if it is missing, then runs `tables` (idempotent DDL), all in one
    transaction (a savepoint in the caller's) under the schema's lock."""
    with conn.transaction():
        conn.execute(LOCK_SCHEMA, (schema,))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        for statement in tables:
            conn.execute(statement)


@contextmanager
def schema_locked(conninfo: str, schema: str, **connect: Any) -> Iterator[None]:
    """Holds the schema's lock on a connection of its own while DDL that runs in other
    transactions (the event library's, which creates a type and then its tables in two)
    creates what the schema lacks."""
    with psycopg.connect(conninfo, autocommit=True, **connect) as conn:
        conn.execute(_LOCK_SCHEMA_SESSION, (schema,))
        try:
            yield
        finally:
            conn.execute(_UNLOCK_SCHEMA_SESSION, (schema,))


class SchemaLockedTables:
    """For the event library's PostgreSQL recorders: `create_table` holds the schema's lock,
    since the library creates a composite type and its tables in two transactions and counts
    only a `DuplicateObject` as "already there" (a concurrent twin raises `UniqueViolation`)."""

    datastore: Any

    def create_table(self) -> None:
        connect = {k: v for k, v in self.datastore.pool.kwargs.items() if k != "row_factory"}
        with schema_locked("", self.datastore.schema, **connect):
            super().create_table()  # type: ignore[misc]
