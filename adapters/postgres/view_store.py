"""`ViewStore` in PostgreSQL: the tracking row is locked (`FOR UPDATE`) for the whole
transaction, so followers in several processes take turns and never apply an event twice."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from factledger.adapters.postgres.schemas import create_tables
from factledger.adapters.postgres.tables import driver_errors_as
from factledger.adapters.postgres.view_statements import Conn, ViewStatements
from factledger.adapters.postgres.view_write_behind import WriteBehind
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_pool
from factledger.adapters.sql_names import sql_name
from factledger.adapters.view_buffer import BufferedViewTransaction
from factledger.application.json_text import dumps_sorted
from factledger.application.ledger.view_store import (
    PositionMovedError,
    ViewStoreUnavailableError,
    ViewTransaction,
)

TABLES = """
CREATE TABLE IF NOT EXISTS {schema}.view_documents (
    projection text NOT NULL, view text NOT NULL, key text COLLATE "C" NOT NULL,
    doc jsonb NOT NULL, PRIMARY KEY (projection, view, key)
);
CREATE TABLE IF NOT EXISTS {schema}.view_tracking (
    projection text PRIMARY KEY, position bigint NOT NULL
);
"""


def _unavailable() -> ViewStoreUnavailableError:
    return ViewStoreUnavailableError("postgres view store failed")


class PostgresViewStore:
    """Views of one projection in `schema` (created if missing).

    Connections come from a pool that replaces those the server dropped (`postgres_pool`); a
    transaction or read nested in another on the same thread shares its connection.
    """

    # A page's commit waits for the server: a rebuild reads the next page meanwhile.
    commits_on_a_server = True

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
                    create_tables(conn, schema, "views", sql.SQL(TABLES).format(schema=ident))
            except BaseException:
                self._pool.close()
                raise
        self._sql = ViewStatements.of(schema, name)
        # The transactions open on this handle, outermost first (more than one: savepoints).
        self._open: list[BufferedViewTransaction] = []
        # The thread in a `writing_behind` block, and its pages' writer.
        self._behind: tuple[int, WriteBehind] | None = None

    def _buffered(self, conn: Conn, position: int) -> BufferedViewTransaction:
        return BufferedViewTransaction(
            self._sql.load_one(conn), self._sql.load_prefix(conn), dumps_sorted, position
        )

    def _write(self, conn: Conn, txn: BufferedViewTransaction) -> None:
        self._sql.write(conn, txn.take_writes())

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
        with self._connection() as conn:
            if self._open:
                # A transaction nested in another: the outer one's writes go first, as they
                # would have unbuffered (and it forgets what it read, which may change).
                self._write(conn, self._open[-1])
            depth = len(self._open)
            try:
                with conn.transaction():
                    txn = self._buffered(conn, self._sql.lock_position(conn))
                    self._open.append(txn)
                    yield txn
                    self._write(conn, txn)
                    if txn.new_position != txn.start_position:
                        self._store_position(conn, txn.start_position, txn.new_position)
            finally:
                del self._open[depth:]

    def _store_position(self, conn: Conn, old: int, new: int) -> None:
        # The row lock keeps other handles out; a transaction nested on this one's
        # connection can still move the position, and then this one must not commit.
        if self._sql.store_position(conn, old, new).rowcount != 1:
            raise PositionMovedError(self.name)

    def transaction(self) -> AbstractContextManager[ViewTransaction]:
        behind = self._behind_on_this_thread()
        return self._transaction() if behind is None else self._transaction_behind(behind)

    @contextmanager
    def _transaction_behind(self, behind: WriteBehind) -> Iterator[ViewTransaction]:
        with self._lock, behind.transaction() as txn:
            yield txn

    def _behind_on_this_thread(self) -> WriteBehind | None:
        behind = self._behind
        return behind[1] if behind is not None and behind[0] == threading.get_ident() else None

    @contextmanager
    def writing_behind(self) -> Iterator[None]:
        """Within the block, this thread's transactions commit on a writer thread while the
        next one runs (`view_write_behind`): for a rebuild, which writes page after page.
        Other threads' transactions commit in turn, as always. At the end every page is
        committed, or `PositionMovedError` says another follower took a turn in between (the
        committed pages and the position are consistent; catching up completes them)."""
        with (
            driver_errors_as(_unavailable),
            self._pool.connection() as reader,
            self._pool.connection() as writer,
        ):
            with self._lock:  # only to start: other threads' transactions take turns with pages
                if self._behind is not None or self._open:
                    raise RuntimeError("writing_behind: this handle has a transaction open")
                behind = WriteBehind(
                    self._sql, reader=reader, writer=writer, position=self.position()
                )
                self._behind = (threading.get_ident(), behind)
            try:
                yield
                behind.wait()
            finally:
                self._behind = None
                # A page still in flight after a failure ends (committed or rolled back)
                # before its connection goes back to the pool.
                behind.close()

    @contextmanager
    def _read(self) -> Iterator[ViewTransaction]:
        # No FOR UPDATE: readers neither wait for nor block a follower's transaction. One
        # snapshot, so the position read is the one the documents reflect.
        with self._connection() as conn:
            outermost = conn.info.transaction_status is TransactionStatus.IDLE
            with conn.transaction(force_rollback=True):
                if outermost:  # a read nested in a transaction shares that one's snapshot
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                # Its writes are never taken: they end with it.
                yield self._buffered(conn, self._sql.read_position(conn))

    def read(self) -> AbstractContextManager[ViewTransaction]:
        return self._read()

    def position(self) -> int:
        behind = self._behind_on_this_thread()
        if behind is not None:
            return behind.position
        with self._connection() as conn:
            return self._sql.read_position(conn)

    def drop(self) -> None:
        with self._connection() as conn, conn.transaction():
            for table in (self._sql.docs, self._sql.tracking):
                conn.execute(
                    sql.SQL("DELETE FROM {} WHERE projection=%s").format(table), (self.name,)
                )

    def close(self) -> None:
        self._pool.close()
