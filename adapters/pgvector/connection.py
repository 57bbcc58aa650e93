"""Connections of the pgvector backend: the pool, vector adaptation, namespace-bound transactions
and the translation of driver errors into the memory port's errors."""

from __future__ import annotations

import struct
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import replace
from typing import Any, LiteralString, TypeVar

import numpy as np
import psycopg
import psycopg_pool
from psycopg import sql
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.types import TypeInfo

from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_async_pool
from factledger.adapters.read_routing import standby_allowed, wrote_on_primary
from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryBackendError,
    MemoryTimeoutError,
    MemoryUnavailableError,
)
from factledger.application.memory.types import Namespace

# A namespace's writer lock; every writer of `memories` takes it (`{}`: the namespace).
NAMESPACE_LOCK = sql.SQL("pg_advisory_xact_lock(hashtextextended('factledger.ns:' || {}, 0))")
_BEGIN_BOUND = sql.SQL("BEGIN; SELECT set_config('app.namespace', {}, true){}")
P = TypeVar("P")
# A statement `in_one_trip` sends: text, or composed from parts.
Query = LiteralString | sql.Composed
R = TypeVar("R")


class _VectorDumper(Dumper):
    """numpy float vector -> pgvector's binary wire format (dim, unused, big-endian float4s)."""

    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        array = np.asarray(obj, dtype=">f4")
        return struct.pack(">HH", array.shape[0], 0) + array.tobytes()


async def register_vector(conn: psycopg.AsyncConnection[Any]) -> None:
    """Teaches a connection to send numpy arrays as `vector` values (use `%b` placeholders)."""
    info = await TypeInfo.fetch(conn, "vector")
    await conn.commit()  # the pool wants configured connections idle, not inside a transaction
    if info is None:
        raise MemoryUnavailableError("pgvector: the vector extension is not installed")
    info.register(conn)  # lets binary COPY name the type in `set_types`
    dumper = type("VectorDumper", (_VectorDumper,), {"oid": info.oid})
    conn.adapters.register_dumper(np.ndarray, dumper)


@contextmanager
def port_errors(operation: str) -> Iterator[None]:
    """Driver errors become port errors; the message names the operation and the error class
    only (driver messages can quote SQL and values), the driver error stays as `__cause__`."""
    try:
        yield
    except MemoryBackendError:
        raise
    except psycopg.DataError as exc:
        # A value PostgreSQL cannot store (NUL in text, a bad unicode escape in JSON).
        raise InvalidMemoryInputError(
            "input", f"rejected by PostgreSQL ({type(exc).__name__})"
        ) from exc
    except psycopg.errors.QueryCanceled as exc:
        raise MemoryTimeoutError(f"pgvector: {operation} timed out") from exc
    except psycopg_pool.PoolTimeout as exc:
        raise MemoryTimeoutError(f"pgvector: {operation} waited too long for a connection") from exc
    except (psycopg.Error, psycopg_pool.PoolClosed) as exc:
        raise MemoryUnavailableError(
            f"pgvector: {operation} failed ({type(exc).__name__})"
        ) from exc


class PgvectorConnections:
    """The application-role pool; every unit of work is one transaction bound to a namespace."""

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str,
        min_size: int,
        max_size: int,
        timeouts: PoolOptions = DEFAULT_POOL,
        standby: PgvectorConnections | None = None,
    ) -> None:
        self.schema = schema
        # A hot standby's pool for the searches a request may route there (`read_routing`).
        self.standby = standby
        # A statement that runs away becomes MemoryTimeoutError instead of holding a connection;
        # a connection the server dropped is replaced before a caller gets it (`postgres_pool`).
        self._pool = healing_async_pool(
            conninfo,
            replace(timeouts, min_size=min_size, max_size=max_size),
            name=f"factledger.pgvector.{schema}",
            # Autocommit: a search is one pipeline (or one statement) whose implicit transaction
            # scopes its namespace binding (`prepared_search`, `bound_search`); `bound` still
            # opens a transaction.
            autocommit=True,
            extra_options=f"-c search_path={schema},public",
            configure=register_vector,
        )

    async def open(self) -> None:
        await self._pool.open(wait=True, timeout=30.0)
        if self.standby is not None:
            # Not awaited: a standby that is down must not stop the backend starting.
            await self.standby._pool.open(wait=False)

    async def close(self) -> None:
        if self.standby is not None:
            await self.standby.close()
        await self._pool.close()

    def for_reads(self) -> PgvectorConnections:
        """The standby's connections when the current request may read there, else these."""
        if self.standby is not None and standby_allowed():
            return self.standby
        return self

    @asynccontextmanager
    async def bound(
        self, namespace: Namespace, *, lock: bool = False
    ) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """One transaction in which Row-Level Security shows only `namespace`'s rows.

        `lock` takes a transaction-level advisory lock on the namespace, serialising writers that
        link facts (one current fact per slot) without blocking readers.
        """
        wrote_on_primary()  # a bound transaction may write: the request's reads follow it here
        async with self._pool.connection() as conn:
            # BEGIN, the binding and the lock in one round trip (ADR 0103): one query of the
            # simple protocol, which takes several statements but no parameters, so the
            # namespace goes as a quoted literal. Never prepared: its text names the namespace.
            name = sql.Literal(namespace)
            locked = sql.SQL(", ") + NAMESPACE_LOCK.format(name) if lock else sql.SQL("")
            await conn.execute(_BEGIN_BOUND.format(name, locked), prepare=False)
            try:
                yield conn
            except BaseException:
                with suppress(psycopg.Error):  # a broken connection: the pool discards it
                    await conn.rollback()
                raise
            await conn.commit()

    async def in_one_trip(
        self, namespace: Namespace, parts: Sequence[tuple[Query, Sequence[Any]]]
    ) -> list[list[tuple[Any, ...]]]:
        """Runs `parts` bound to `namespace` in one pipeline: sent together, they run as one
        implicit transaction that the pipeline's only Sync ends (a failure rolls back all of
        them), so they cost one round trip where `bound` costs a BEGIN, a statement each and
        a COMMIT (ADR 0103). Returns each part's rows, in order (none for a part that
        returns none). For work that needs no answer between its statements."""
        wrote_on_primary()  # the parts may write: the request's reads follow them here
        async with self._pool.connection() as conn:
            cursors = [conn.cursor() for _ in parts]
            async with conn.pipeline():
                await conn.execute("SELECT set_config('app.namespace', %s, true)", [namespace])
                for cursor, (statement, args) in zip(cursors, parts, strict=True):
                    await cursor.execute(statement, args)
            return [await c.fetchall() if c.description is not None else [] for c in cursors]

    @asynccontextmanager
    async def snapshot(self, namespace: Namespace) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A read-only transaction bound to `namespace` whose statements all read one snapshot
        (repeatable read), for what must be read together (a mirror's load)."""
        async with self._pool.connection() as conn, conn.transaction():
            # Before any query: the isolation level is set by the transaction's first statement.
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            await conn.execute("SELECT set_config('app.namespace', %s, true)", [namespace])
            yield conn

    async def one_statement(self, run: Callable[[psycopg.AsyncConnection[Any]], Awaitable[R]]) -> R:
        """`run` on an idle autocommit connection: each statement is its own transaction, so one
        that binds a namespace transaction-locally (`bound_search`, `prepared_search`) binds
        nothing after it."""
        async with self._pool.connection() as conn:
            return await run(conn)

    @asynccontextmanager
    async def unbound(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A transaction bound to no namespace: RLS shows no rows at all."""
        async with self._pool.connection() as conn, conn.transaction():
            yield conn

    def table(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.schema, name)


async def check_role_and_dimension(db: PgvectorConnections, schema: str, dimension: int) -> None:
    """Refuses to serve as a role that owns the tables or bypasses RLS (isolation would then
    rest on our WHERE clauses alone), or with an embedder the schema was not built for."""
    with port_errors("start"):
        async with db.unbound() as conn:
            cur = await conn.execute(
                "SELECT r.rolsuper OR r.rolbypassrls OR pg_has_role(current_user, t.tableowner,"
                " 'USAGE'), (SELECT value FROM store_settings WHERE key = 'dimension') "
                "FROM pg_roles r, pg_tables t WHERE r.rolname = current_user "
                "AND t.schemaname = %s AND t.tablename = 'memories'",
                [schema],
            )
            row = await cur.fetchone()
    if row is None or row[0]:
        raise MemoryUnavailableError(
            "pgvector: the application role owns the tables or bypasses row-level security"
        )
    if int(row[1]) != dimension:
        raise MemoryUnavailableError("pgvector: the embedder's dimension differs from the schema's")
