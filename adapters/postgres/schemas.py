"""Creating a schema and its tables from processes that start together, and not again.

- `CREATE SCHEMA IF NOT EXISTS` and `CREATE TABLE IF NOT EXISTS` are not safe against
  themselves: two sessions that both find a name free both insert it, and the second fails on a
  catalogue's unique index (`pg_namespace` when two sync workers started at once on a fresh
  database; `pg_type` when both API processes of `serve --workers 2` created the view store's
  tables). An advisory lock on the schema's name, taken first and held until the last table
  exists, serialises them; the second then finds everything there.
- `CREATE INDEX IF NOT EXISTS` and `ALTER TABLE ... IF NOT EXISTS` lock their table before
  they look, even when there is nothing to do: a process that starts while others write waits
  behind every write in flight and holds up every write after it (a replacement API process
  did, and a session end died in the deadlock that followed). So DDL that has run is not run
  again: our own stores' tables are versioned migrations (`postgres.migrations`, under the
  same lock); the event library's tables, whose DDL is the library's, are marked per schema
  with a digest of its text once it has run (`factledger_ddl`), and a process that finds its
  version marked runs none of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import AsyncCursor, sql

# Parameter: the schema's name. Held until the caller's transaction ends.
LOCK_SCHEMA = "SELECT pg_advisory_xact_lock(hashtextextended('factledger.schema:' || %s, 0))"
# The same lock, held by a session (the same key: each excludes the other).
_LOCK_SCHEMA_SESSION = "SELECT pg_advisory_lock(hashtextextended('factledger.schema:' || %s, 0))"
_UNLOCK_SCHEMA_SESSION = (
    "SELECT pg_advisory_unlock(hashtextextended('factledger.schema:' || %s, 0))"
)
_MARKS = "factledger_ddl"
_MARKS_TABLE = """CREATE TABLE IF NOT EXISTS {schema}.factledger_ddl (
    store text PRIMARY KEY, version text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"""
_MARK = """INSERT INTO {schema}.factledger_ddl AS m (store, version) VALUES (%s, %s)
    ON CONFLICT (store) DO UPDATE SET version = excluded.version, applied_at = now()"""
_MARKED = "SELECT version FROM {schema}.factledger_ddl WHERE store = %s"


def ddl_version(*statements: str) -> str:
    """The version of a store's DDL: a digest of its text, so any change to it runs it again."""
    return hashlib.sha256("\x1f".join(statements).encode()).hexdigest()[:16]


def create_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    """Creates `schema` if it is missing, in a transaction (a savepoint in the caller's) under
    the schema's lock."""
    with conn.transaction():
        _lock_and_create(conn, schema)


class SchemaLockedTables:
    """For the event library's PostgreSQL recorders: `create_table` runs the library's DDL
    under the schema's lock, once per version of its text. The library creates a composite
    type and its tables in two transactions and counts only a `DuplicateObject` as "already
    there" (a concurrent twin raises `UniqueViolation`); and its `CREATE INDEX IF NOT EXISTS`
    would wait behind every insert in flight."""

    datastore: Any
    events_table_name: str
    sql_create_statements: list[sql.Composed]

    def create_table(self) -> None:
        schema, store = self.datastore.schema, f"eventsourcing.{self.events_table_name}"
        version = ddl_version(*(s.as_string() for s in self.sql_create_statements))
        connect = {k: v for k, v in self.datastore.pool.kwargs.items() if k != "row_factory"}
        # A connection of its own holds the lock: the library's DDL runs on its pool's.
        with psycopg.connect("", autocommit=True, **connect) as conn:
            if _marked(conn, schema, store) != version:
                with _session_locked(conn, schema):
                    conn.execute(_q(_MARKS_TABLE, schema))
                    if _marked(conn, schema, store) != version:
                        super().create_table()  # type: ignore[misc]
                        conn.execute(_q(_MARK, schema), (store, version))
        self.datastore.register_type_adapters()  # what `create_table` ends with; idempotent


@contextmanager
def _session_locked(conn: psycopg.Connection[Any], schema: str) -> Iterator[None]:
    conn.execute(_LOCK_SCHEMA_SESSION, (schema,))
    try:
        yield
    finally:
        conn.execute(_UNLOCK_SCHEMA_SESSION, (schema,))


def _lock_and_create(conn: psycopg.Connection[Any], schema: str) -> None:
    conn.execute(LOCK_SCHEMA, (schema,))
    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))


def _q(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(schema=sql.Identifier(schema))


def _marked(conn: psycopg.Connection[Any], schema: str, store: str) -> str | None:
    """The version of `store`'s DDL marked in `schema` (None: none, or no marks yet). Reads
    only the marks, so it waits for no writer of the store's tables."""
    found = conn.execute("SELECT to_regclass(%s)", (_marks_name(schema),)).fetchone()
    if found is None or found[0] is None:
        return None
    row = conn.execute(_q(_MARKED, schema), (store,)).fetchone()
    return None if row is None else str(row[0])


async def _marked_async(cur: AsyncCursor[Any], schema: str, store: str) -> str | None:
    await cur.execute("SELECT to_regclass(%s)", (_marks_name(schema),))
    found = await cur.fetchone()
    if found is None or found[0] is None:
        return None
    await cur.execute(_q(_MARKED, schema), (store,))
    row = await cur.fetchone()
    return None if row is None else str(row[0])


def _marks_name(schema: str) -> str:
    return sql.Identifier(schema, _MARKS).as_string()
