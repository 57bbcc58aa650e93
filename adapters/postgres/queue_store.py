"""`QueueStore` in PostgreSQL: the review queue's indexed tables in the views' schema.

The tracking row is locked (`FOR UPDATE`) for the whole write transaction, so followers in
several processes take turns; readers never wait for them: each read is one statement (one
snapshot) on an autocommit connection. With `read_conninfo` (a hot standby), a read the
request may route there (`read_routing`) uses a pool on the standby once the standby's queue
has reached the position the request needs; every write, and every other read, stays on the
primary.
"""

# Statements are built from the code's own table names; every value is a parameter.
# ruff: noqa: S608

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import cast

import psycopg

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.migrations import migrate
from factledger.adapters.postgres.tables import driver_errors_as
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_pool
from factledger.adapters.read_routing import standby_allowed, views_floor
from factledger.adapters.review_queue_combined import combined_statements
from factledger.adapters.review_queue_sql import (
    Cursorish,
    QueueTables,
    SqlQueueStore,
    SqlQueueWrites,
    counter_statements,
    covering_statements,
    subject_search_statements,
    table_statements,
)
from factledger.adapters.sql_names import sql_name
from factledger.application.review_queue.ports import QueueStoreUnavailableError, QueueWrites

# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (
    StoreMigration("0001-tables", table_statements("{schema}.", text='text COLLATE "C"')),
    StoreMigration("0002-groups-covering-index", covering_statements("{schema}.")),
    StoreMigration(
        "0003-subjects-search",
        subject_search_statements(
            "{schema}.", text='text COLLATE "C"', ref_of_search="split_part(i.search, E'\\n', 2)"
        ),
    ),
    StoreMigration("0004-counters", counter_statements("{schema}.", text='text COLLATE "C"')),
    StoreMigration(
        "0005-combined-counters", combined_statements("{schema}.", text='text COLLATE "C"')
    ),
)

Conn = psycopg.Connection[tuple[object, ...]]


def _unavailable() -> QueueStoreUnavailableError:
    return QueueStoreUnavailableError("postgres review queue failed")


class _Runner:
    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def run(self, query: str, args: Sequence[object] = ()) -> Cursorish:
        return self._conn.execute(query.replace("?", "%s"), list(args))

    def run_many(self, query: str, rows: Sequence[Sequence[object]]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(query.replace("?", "%s"), rows)


class PostgresQueueStore(SqlQueueStore):
    """The review queue's tables in `schema` (created if missing)."""

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str = "public",
        name: str = "review_queue",
        pool: PoolOptions = DEFAULT_POOL,
        read_conninfo: str | None = None,
    ) -> None:
        super().__init__()
        self.name, self.schema = name, sql_name(schema)
        self._pool = healing_pool(conninfo, pool, name=f"factledger.review_queue.{schema}")
        with driver_errors_as(_unavailable):
            migrate(conninfo, self.schema, "review_queue", MIGRATIONS, pool=pool)
            self._pool.open()
        self._standby = None
        if read_conninfo is not None:
            self._standby = healing_pool(
                read_conninfo, pool, name=f"factledger.review_queue.{schema}.r"
            )
            self._standby.open()  # not awaited: a standby that is down must not stop a start
        self._tables = QueueTables(f'"{self.schema}".')

    @contextmanager
    def _transaction(self) -> Iterator[QueueWrites]:
        with (
            driver_errors_as(_unavailable),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            db = _Runner(conn)
            # As the views: a server crash may take back the last commits, rows and position
            # together, and the projection replays those events from the ledger.
            conn.execute("SET LOCAL synchronous_commit = off")
            db.run(
                f"INSERT INTO {self._tables.tracking} VALUES (?, 0) ON CONFLICT DO NOTHING",
                [self.name],
            )
            row = db.run(
                f"SELECT position FROM {self._tables.tracking} WHERE name = ? FOR UPDATE",
                [self.name],
            ).fetchone()
            txn = SqlQueueWrites(db, self._tables, int(cast("int", row[0])))
            yield txn
            txn.finish()
            if txn.new_position != txn.start_position:
                self._tables.store_position(db, self.name, txn.new_position)

    def transaction(self) -> AbstractContextManager[QueueWrites]:
        return self._transaction()

    @contextmanager
    def _read(self) -> Iterator[_Runner]:
        # Autocommit: each statement its own snapshot, and the page, its count and its
        # neighbours are one statement.
        if self._standby is not None and standby_allowed():
            with driver_errors_as(_unavailable), self._standby.connection() as conn:
                db = _Runner(conn)
                if self._tables.read_position(db, self.name) >= views_floor():
                    yield db
                    return
            # The standby's queue is behind the position the request needs: the primary's.
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            yield _Runner(conn)

    def _reading(self) -> AbstractContextManager[_Runner]:
        return self._read()

    def position(self) -> int:
        """The primary's (the follower's, and the floor a standby read must reach)."""
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            return self._tables.read_position(_Runner(conn), self.name)

    def drop(self) -> None:
        with (
            driver_errors_as(_unavailable),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            self._tables.drop(_Runner(conn), self.name, empty="TRUNCATE")

    def close(self) -> None:
        if self._standby is not None:
            self._standby.close()
        self._pool.close()
