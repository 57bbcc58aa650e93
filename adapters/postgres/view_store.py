"""`ViewStore` in PostgreSQL: the tracking row is locked (`FOR UPDATE`) for the whole
transaction, so followers in several processes take turns and never apply an event twice."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import cast

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.migrations import migrate
from factledger.adapters.postgres.tables import driver_errors_as
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_pool
from factledger.adapters.read_routing import standby_allowed, views_floor, wrote_on_primary
from factledger.adapters.sql_names import sql_name
from factledger.adapters.view_buffer import (
    BufferedViewTransaction,
    LoadMany,
    LoadOne,
    LoadPrefix,
)
from factledger.application.json_text import dumps_sorted
from factledger.application.ledger.ports import (
    PositionMovedError,
    ViewStoreUnavailableError,
    ViewTransaction,
)

# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (
    StoreMigration(
        "0001-tables",
        (
            """CREATE TABLE IF NOT EXISTS {schema}.view_documents (
            projection text NOT NULL, view text NOT NULL, key text COLLATE "C" NOT NULL,
            doc jsonb NOT NULL, PRIMARY KEY (projection, view, key))""",
            """CREATE TABLE IF NOT EXISTS {schema}.view_tracking (
            projection text PRIMARY KEY, position bigint NOT NULL)""",
        ),
    ),
)


Conn = psycopg.Connection[tuple[object, ...]]


def _load_one(conn: Conn, docs: sql.Composed, name: str) -> LoadOne:
    query = sql.SQL("SELECT doc::text FROM {} WHERE projection=%s AND view=%s AND key=%s").format(
        docs
    )

    def load(view: str, key: str) -> str | None:
        row = conn.execute(query, (name, view, key)).fetchone()
        return None if row is None else str(row[0])

    return load


def _load_prefix(conn: Conn, docs: sql.Composed, name: str) -> LoadPrefix:
    query = sql.SQL(
        "SELECT key, doc::text FROM {} WHERE projection=%s AND view=%s "
        "AND left(key, %s) = %s ORDER BY key"
    ).format(docs)

    def load(view: str, prefix: str) -> list[tuple[str, str]]:
        rows = conn.execute(query, (name, view, len(prefix), prefix)).fetchall()
        return [(str(key), str(doc)) for key, doc in rows]

    return load


def _load_many(conn: Conn, docs: sql.Composed, name: str) -> LoadMany:
    query = sql.SQL(
        "SELECT key, doc::text FROM {} WHERE projection=%s AND view=%s AND key = ANY(%s)"
    ).format(docs)

    def load(view: str, keys: Sequence[str]) -> dict[str, str]:
        rows = conn.execute(query, (name, view, list(keys))).fetchall()
        return {str(key): str(doc) for key, doc in rows}

    return load


def _unavailable() -> ViewStoreUnavailableError:
    return ViewStoreUnavailableError("postgres view store failed")


class PostgresViewStore:
    """Views of one projection in `schema` (created if missing).

    Connections come from a pool that replaces those the server dropped (`postgres_pool`); a
    transaction or read nested in another on the same thread shares its connection. With
    `read_conninfo` (a hot standby), an outermost read the request may route there
    (`read_routing`) uses a pool on the standby; every write, and every read of the follower
    that writes after it, stays on the primary.
    """

    # A page's commit waits for the server: a rebuild reads the next page meanwhile.
    commits_on_a_server = True

    def __init__(
        self,
        conninfo: str,
        name: str,
        *,
        schema: str = "public",
        pool: PoolOptions = DEFAULT_POOL,
        read_conninfo: str | None = None,
    ) -> None:
        self.name, self.schema = name, sql_name(schema)
        self._lock = threading.RLock()
        self._held: psycopg.Connection[tuple[object, ...]] | None = None
        ident = sql.Identifier(schema)
        self._pool = healing_pool(conninfo, pool, name=f"factledger.views.{schema}")
        with driver_errors_as(_unavailable):
            migrate(conninfo, self.schema, "views", MIGRATIONS, pool=pool)
            self._pool.open()
        self._standby = None
        if read_conninfo is not None:
            self._standby = healing_pool(read_conninfo, pool, name=f"factledger.views.{schema}.r")
            self._standby.open()  # not awaited: a standby that is down must not stop a start
        self._tracking = sql.SQL("{}.view_tracking").format(ident)
        self._docs = sql.SQL("{}.view_documents").format(ident)
        # Each key is written once per statement (the buffer keeps a document's last state),
        # which ON CONFLICT DO UPDATE requires.
        self._upsert_rows = sql.SQL(
            "INSERT INTO {} SELECT %s, v, k, d::jsonb "
            "FROM unnest(%b::text[], %b::text[], %b::text[]) AS t(v, k, d) "
            "ON CONFLICT (projection, view, key) DO UPDATE SET doc = excluded.doc"
        ).format(self._docs)
        self._delete_rows = sql.SQL(
            "DELETE FROM {} WHERE projection = %s AND (view, key) IN "
            "(SELECT * FROM unnest(%b::text[], %b::text[]))"
        ).format(self._docs)
        # The transactions open on this handle, outermost first (more than one: savepoints).
        self._open: list[BufferedViewTransaction] = []

    def _buffered(self, conn: Conn, position: int) -> BufferedViewTransaction:
        return BufferedViewTransaction(
            _load_one(conn, self._docs, self.name),
            _load_prefix(conn, self._docs, self.name),
            dumps_sorted,
            position,
            _load_many(conn, self._docs, self.name),
        )

    def _write(self, conn: Conn, txn: BufferedViewTransaction) -> None:
        """A transaction's writes in two statements at most, each taking its rows as arrays
        (`unnest`): a round trip per document was most of a page, and a pipelined statement
        per document still cost psycopg's Python a third of a rebuild's CPU."""
        writes = txn.take_writes()
        if writes.deletes:
            views, keys = (list(column) for column in zip(*writes.deletes, strict=True))
            conn.execute(self._delete_rows, (self.name, views, keys))
        if writes.puts:
            views, keys, texts = (list(column) for column in zip(*writes.puts, strict=True))
            conn.execute(self._upsert_rows, (self.name, views, keys, texts))

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
        wrote_on_primary()
        with self._connection() as conn:
            if self._open:
                # A transaction nested in another: the outer one's writes go first, as they
                # would have unbuffered (and it forgets what it read, which may change).
                self._write(conn, self._open[-1])
            depth = len(self._open)
            try:
                with conn.transaction():
                    txn = self._buffered(conn, self._lock_position(conn))
                    self._open.append(txn)
                    yield txn
                    self._write(conn, txn)
                    if txn.new_position != txn.start_position:
                        self._store_position(conn, txn.start_position, txn.new_position)
            finally:
                del self._open[depth:]

    def _lock_position(self, conn: Conn) -> int:
        """Takes the tracking row's lock and reads the position, in one round trip."""
        with conn.pipeline():
            # No wait for the WAL's flush at commit: a server crash can take back the last
            # commits of the views, documents and position together, and the projection then
            # replays those events from the ledger (whose commits keep waiting).
            conn.execute("SET LOCAL synchronous_commit = off")
            conn.execute(
                sql.SQL("INSERT INTO {} VALUES (%s, 0) ON CONFLICT DO NOTHING").format(
                    self._tracking
                ),
                (self.name,),
            )
            cur = conn.execute(
                sql.SQL("SELECT position FROM {} WHERE projection=%s FOR UPDATE").format(
                    self._tracking
                ),
                (self.name,),
            )
        row = cur.fetchone()
        return int(cast("int", row[0])) if row else 0

    def _store_position(self, conn: Conn, old: int, new: int) -> None:
        # The row lock keeps other handles out; a transaction nested on this one's
        # connection can still move the position, and then this one must not commit.
        moved = conn.execute(
            sql.SQL("UPDATE {} SET position=%s WHERE projection=%s AND position=%s").format(
                self._tracking
            ),
            (new, self.name, old),
        )
        if moved.rowcount != 1:
            raise PositionMovedError(self.name)

    def transaction(self) -> AbstractContextManager[ViewTransaction]:
        return self._transaction()

    @contextmanager
    def _read(self) -> Iterator[ViewTransaction]:
        # No FOR UPDATE: readers neither wait for nor block a follower's transaction. One
        # snapshot, so the position read is the one the documents reflect.
        if self._standby is not None and self._held is None and standby_allowed():
            with (
                driver_errors_as(_unavailable),
                self._standby.connection() as conn,
                conn.transaction(force_rollback=True),
            ):
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                position = self._read_position(conn)
                if position >= views_floor():
                    yield self._buffered(conn, position)
                    return
            # The standby's views are behind those the request needs: the primary's.
        with self._connection() as conn:
            outermost = conn.info.transaction_status is TransactionStatus.IDLE
            with conn.transaction(force_rollback=True):
                if outermost:  # a read nested in a transaction shares that one's snapshot
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                # Its writes are never taken: they end with it.
                yield self._buffered(conn, self._read_position(conn))

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
        if self._standby is not None:
            self._standby.close()
        self._pool.close()
