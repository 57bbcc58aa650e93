"""`ViewStore` in PostgreSQL: the tracking row is locked (`FOR UPDATE`) for the whole
transaction, so followers in several processes take turns and never apply an event twice."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import cast

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from factledger.adapters.postgres.tables import driver_errors_as
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_pool
from factledger.adapters.sql_names import sql_name
from factledger.application.ledger.view_store import (
    PositionMovedError,
    ViewStoreUnavailableError,
    ViewTransaction,
)
from factledger.domain.values import JsonObject

TABLES = """
CREATE TABLE IF NOT EXISTS {schema}.view_documents (
    projection text NOT NULL, view text NOT NULL, key text COLLATE "C" NOT NULL,
    doc jsonb NOT NULL, PRIMARY KEY (projection, view, key)
);
CREATE TABLE IF NOT EXISTS {schema}.view_tracking (
    projection text PRIMARY KEY, position bigint NOT NULL
);
"""


class _PostgresTransaction:
    def __init__(self, conn: psycopg.Connection[tuple[object, ...]], schema: str, name: str):
        self._conn, self._name = conn, name
        self._docs = sql.SQL("{}.view_documents").format(sql.Identifier(schema))
        self.start_position = self.new_position = 0

    def _exec(self, query: str, params: tuple[object, ...]) -> psycopg.Cursor[tuple[object, ...]]:
        return self._conn.execute(sql.SQL(query).format(docs=self._docs), params)

    def get(self, view: str, key: str) -> JsonObject | None:
        row = self._exec(
            "SELECT doc FROM {docs} WHERE projection=%s AND view=%s AND key=%s",
            (self._name, view, key),
        ).fetchone()
        return None if row is None else cast("JsonObject", row[0])

    def put(self, view: str, key: str, doc: JsonObject) -> None:
        self._exec(
            "INSERT INTO {docs} VALUES (%s, %s, %s, %s::jsonb) "
            "ON CONFLICT (projection, view, key) DO UPDATE SET doc = excluded.doc",
            (self._name, view, key, json.dumps(doc)),
        )

    def delete(self, view: str, key: str) -> None:
        self._exec(
            "DELETE FROM {docs} WHERE projection=%s AND view=%s AND key=%s",
            (self._name, view, key),
        )

    def scan(self, view: str, prefix: str) -> list[tuple[str, JsonObject]]:
        rows = self._exec(
            "SELECT key, doc FROM {docs} WHERE projection=%s AND view=%s "
            "AND left(key, %s) = %s ORDER BY key",
            (self._name, view, len(prefix), prefix),
        ).fetchall()
        return [(str(key), cast("JsonObject", doc)) for key, doc in rows]

    def position(self) -> int:
        return self.new_position

    def advance(self, position: int) -> None:
        self.new_position = position


def _unavailable() -> ViewStoreUnavailableError:
    return ViewStoreUnavailableError("postgres view store failed")


class PostgresViewStore:
    """Views of one projection in `schema` (created if missing).

    Connections come from a pool that replaces those the server dropped (`postgres_pool`); a
    transaction or read nested in another on the same thread shares its connection.
    """

    def __init__(
        self, conninfo: str, name: str, *, schema: str = "public", pool: PoolOptions = DEFAULT_POOL
    ) -> None:
        self.name, self.schema = name, sql_name(schema)
        self._lock = threading.RLock()
        self._held: psycopg.Connection[tuple[object, ...]] | None = None
        ident = sql.Identifier(schema)
        self._pool = healing_pool(conninfo, pool, name=f"factledger.views.{schema}")
        with driver_errors_as(_unavailable):
            self._pool.open()
            try:
                with self._pool.connection() as conn:
                    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
                    conn.execute(sql.SQL(TABLES).format(schema=ident))
            except BaseException:
                self._pool.close()
                raise
        self._tracking = sql.SQL("{}.view_tracking").format(ident)
        self._docs = sql.SQL("{}.view_documents").format(ident)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
        """The lock, and the connection of the outermost block on this thread (checked out of
        the pool for that block only, so a dropped one is replaced before the next)."""
        with self._lock, driver_errors_as(_unavailable):
            if self._held is not None:
                yield self._held
                return
            with self._pool.connection() as conn:
                self._held = conn
                try:
                    yield conn
                finally:
                    self._held = None

    @contextmanager
    def _transaction(self) -> Iterator[ViewTransaction]:
        with self._connection() as conn, conn.transaction():
            conn.execute(
                sql.SQL("INSERT INTO {} VALUES (%s, 0) ON CONFLICT DO NOTHING").format(
                    self._tracking
                ),
                (self.name,),
            )
            row = conn.execute(
                sql.SQL("SELECT position FROM {} WHERE projection=%s FOR UPDATE").format(
                    self._tracking
                ),
                (self.name,),
            ).fetchone()
            txn = _PostgresTransaction(conn, self.schema, self.name)
            txn.start_position = txn.new_position = int(cast("int", row[0])) if row else 0
            yield txn
            if txn.new_position != txn.start_position:
                # The row lock keeps other handles out; a transaction nested on this one's
                # connection can still move the position, and then this one must not commit.
                moved = conn.execute(
                    sql.SQL("UPDATE {} SET position=%s WHERE projection=%s AND position=%s").format(
                        self._tracking
                    ),
                    (txn.new_position, self.name, txn.start_position),
                )
                if moved.rowcount != 1:
                    raise PositionMovedError(self.name)

    def transaction(self) -> AbstractContextManager[ViewTransaction]:
        return self._transaction()

    @contextmanager
    def _read(self) -> Iterator[ViewTransaction]:
        # No FOR UPDATE: readers neither wait for nor block a follower's transaction. One
        # snapshot, so the position read is the one the documents reflect.
        with self._connection() as conn:
            outermost = conn.info.transaction_status is TransactionStatus.IDLE
            with conn.transaction(force_rollback=True):
                if outermost:  # a read nested in a transaction shares that one's snapshot
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                txn = _PostgresTransaction(conn, self.schema, self.name)
                txn.start_position = txn.new_position = self._read_position(conn)
                yield txn

    def read(self) -> AbstractContextManager[ViewTransaction]:
        return self._read()

    def position(self) -> int:
        with self._connection() as conn:
            return self._read_position(conn)

    def _read_position(self, conn: psycopg.Connection[tuple[object, ...]]) -> int:
        row = conn.execute(
            sql.SQL("SELECT position FROM {} WHERE projection=%s").format(self._tracking),
            (self.name,),
        ).fetchone()
        return 0 if row is None else int(cast("int", row[0]))

    def drop(self) -> None:
        with self._connection() as conn, conn.transaction():
            for table in (self._docs, self._tracking):
                conn.execute(
                    sql.SQL("DELETE FROM {} WHERE projection=%s").format(table), (self.name,)
                )

    def close(self) -> None:
        self._pool.close()
