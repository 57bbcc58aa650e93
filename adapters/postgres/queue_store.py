"""`QueueStore` in PostgreSQL: the review queue's indexed tables in the views' schema.

The tracking row is locked (`FOR UPDATE`) for the whole write transaction, so followers in
several processes take turns; readers take a snapshot and never wait for them.
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
from factledger.adapters.review_queue_sql import (
    Cursorish,
    QueueTables,
    SqlQueueWrites,
    table_statements,
)
from factledger.adapters.sql_names import sql_name
from factledger.application.review_queue.ports import (
    QueueStoreUnavailableError,
    QueueWrites,
    RowGroups,
    RowPage,
)
from factledger.application.review_queue.queue import (
    QueueChoices,
    QueueCursor,
    QueueFilter,
    Selected,
)

# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (
    StoreMigration("0001-tables", table_statements("{schema}.", text='text COLLATE "C"')),
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


class PostgresQueueStore:
    """The review queue's tables in `schema` (created if missing)."""

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str = "public",
        name: str = "review_queue",
        pool: PoolOptions = DEFAULT_POOL,
    ) -> None:
        self.name, self.schema = name, sql_name(schema)
        self._pool = healing_pool(conninfo, pool, name=f"factledger.review_queue.{schema}")
        with driver_errors_as(_unavailable):
            migrate(conninfo, self.schema, "review_queue", MIGRATIONS, pool=pool)
            self._pool.open()
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
            txn.flush()
            if txn.new_position != txn.start_position:
                self._tables.store_position(db, self.name, txn.new_position)

    def transaction(self) -> AbstractContextManager[QueueWrites]:
        return self._transaction()

    @contextmanager
    def _reading(self) -> Iterator[_Runner]:
        with (
            driver_errors_as(_unavailable),
            self._pool.connection() as conn,
            conn.transaction(force_rollback=True),
        ):
            # The page, its count and its neighbours from one snapshot.
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield _Runner(conn)

    def position(self) -> int:
        with self._reading() as db:
            return self._tables.read_position(db, self.name)

    def drop(self) -> None:
        with (
            driver_errors_as(_unavailable),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            self._tables.drop(_Runner(conn), self.name)

    def close(self) -> None:
        self._pool.close()

    def page(self, tenant: str, where: QueueFilter, cursor: QueueCursor, limit: int) -> RowPage:
        with self._reading() as db:
            return self._tables.page(db, tenant, where, cursor, limit)

    def groups(self, tenant: str, where: QueueFilter, *, offset: int, limit: int) -> RowGroups:
        with self._reading() as db:
            return self._tables.groups(db, tenant, where, offset=offset, limit=limit)

    def select(self, tenant: str, where: QueueFilter, *, limit: int) -> list[Selected]:
        with self._reading() as db:
            return self._tables.select(db, tenant, where, limit=limit)

    def choices(self, tenant: str) -> QueueChoices:
        with self._reading() as db:
            return self._tables.choices(db, tenant)
