"""The ledger's event store in PostgreSQL, in the `eventsourcing` library's terms.

The library reads its configuration from an env mapping; each store's module builds its own
(`in_memory.event_store`, `sqlite.event_store`, this one), so nothing else spells the names.

`HealingPostgresFactory` is the library's PostgreSQL factory with the pool every other
PostgreSQL store has (`postgres_pool`): connections checked before use (`POSTGRES_PRE_PING`),
a bounded wait for one (`POSTGRES_CONNECT_TIMEOUT`, which the library uses as the pool's wait),
and what the library's env does not cover, set on its pool before it first connects: libpq's
connect timeout, the statement timeout, a short reconnect period and, with a primary and
standbys, `target_session_attrs`.
"""

from __future__ import annotations

import math
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import ApplicationRecorder
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresFactory,
)
from eventsourcing.utils import Environment, EnvType
from psycopg import sql

from factledger.adapters.postgres.ledger_recorder import GroupCommitRecorder
from factledger.adapters.postgres.schemas import SchemaLockedTables, create_schema
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sql_names import sql_name

FACTORY_TOPIC = f"{__name__}:HealingPostgresFactory"
# Our own keys in the library's env: what its datastore has no setting for.
STATEMENT_TIMEOUT_MS = "FACTLEDGER_POSTGRES_STATEMENT_TIMEOUT_MS"
LIBPQ_CONNECT_TIMEOUT_S = "FACTLEDGER_POSTGRES_LIBPQ_CONNECT_TIMEOUT_S"
RECONNECT_TIMEOUT_S = "FACTLEDGER_POSTGRES_RECONNECT_TIMEOUT_S"
TARGET_SESSION_ATTRS = "FACTLEDGER_POSTGRES_TARGET_SESSION_ATTRS"


class PruningPostgresAggregateRecorder(SchemaLockedTables, PostgresAggregateRecorder):
    """The library's recorder of snapshots; it deletes a subject's older snapshots once a
    newer one is stored (only the newest is ever read)."""

    def delete_older(self, originator_id: UUID, version: int) -> int:
        """Deletes the originator's rows below `version`; returns how many."""
        statement = sql.SQL(
            "DELETE FROM {schema}.{table} WHERE originator_id = %s AND originator_version < %s"
        ).format(
            schema=sql.Identifier(self.datastore.schema),
            table=sql.Identifier(self.events_table_name),
        )
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(statement, (originator_id, version))
            conn.commit()
            return int(curs.rowcount)


class HealingPostgresFactory(PostgresFactory):
    """The library's factory; its pool gets our connect, statement and reconnect timeouts,
    and its application recorder batches saves (`GroupCommitRecorder`)."""

    application_recorder_class = GroupCommitRecorder
    aggregate_recorder_class = PruningPostgresAggregateRecorder

    def __init__(self, env: Environment | EnvType | None) -> None:
        super().__init__(env)
        self._recorders: list[ApplicationRecorder] = []
        pool: Any = self.datastore.pool
        kwargs: dict[str, Any] = pool.kwargs
        statement_ms = self.env.get(STATEMENT_TIMEOUT_MS)
        if statement_ms:
            kwargs["options"] = f"-c statement_timeout={int(statement_ms)}"
        connect_s = self.env.get(LIBPQ_CONNECT_TIMEOUT_S)
        if connect_s:
            kwargs["connect_timeout"] = int(connect_s)
        reconnect_s = self.env.get(RECONNECT_TIMEOUT_S)
        if reconnect_s:
            pool.reconnect_timeout = float(reconnect_s)
        # With a primary and standbys: which server a session accepts (the primary, for writes).
        attrs = self.env.get(TARGET_SESSION_ATTRS)
        if attrs:
            kwargs["target_session_attrs"] = attrs

    def application_recorder(self) -> ApplicationRecorder:
        recorder = super().application_recorder()
        self._recorders.append(recorder)
        return recorder

    def close(self) -> None:
        # The writer thread first: it answers what is queued while the pool is still open.
        for recorder in self._recorders:
            if isinstance(recorder, GroupCommitRecorder):
                recorder.close()
        super().close()


def postgres_env(
    location: PostgresLocation, *, schema: str | None = None, pool: PoolOptions = DEFAULT_POOL
) -> dict[str, str]:
    """PostgreSQL; the tables are `ledger_events` (and `ledger_snapshots`) in `schema`.

    The library's optional stored functions stay off: they are shared by every app in a schema
    and skip the table lock that keeps notification ids in commit order. Its pool keeps
    `pool.min_size` connections (at least one) and grows to `pool.max_size`.
    """
    env = location.eventsourcing_env()
    env["PERSISTENCE_MODULE"] = FACTORY_TOPIC
    env["POSTGRES_ENABLE_DB_FUNCTIONS"] = "n"
    env["POSTGRES_PRE_PING"] = "y"
    # The library reads whole seconds; rounding up never makes the wait shorter than asked.
    env["POSTGRES_CONNECT_TIMEOUT"] = str(math.ceil(pool.acquire_timeout_s))
    env["POSTGRES_POOL_SIZE"] = str(max(1, pool.min_size))
    env["POSTGRES_MAX_OVERFLOW"] = str(max(0, pool.max_size - max(1, pool.min_size)))
    env[STATEMENT_TIMEOUT_MS] = str(pool.statement_timeout_ms)
    env[LIBPQ_CONNECT_TIMEOUT_S] = str(pool.connect_timeout_s)
    env[RECONNECT_TIMEOUT_S] = str(pool.reconnect_timeout_s)
    if location.target_session_attrs:
        env[TARGET_SESSION_ATTRS] = location.target_session_attrs
    if schema is not None:
        ensure_schema(location, schema, pool=pool)
        env["POSTGRES_SCHEMA"] = schema
    return env


def ensure_schema(
    location: PostgresLocation, schema: str, *, pool: PoolOptions = DEFAULT_POOL
) -> None:
    """The library expects the schema to exist already."""
    with psycopg.connect(location.conninfo, **pool.connection_kwargs(autocommit=True)) as conn:
        create_schema(conn, sql_name(schema))


def commit_channel(recorder: object) -> str | None:
    """The channel the library's PostgreSQL recorder `NOTIFY`s in each transaction that
    inserts events (None for another store's recorder)."""
    if isinstance(recorder, PostgresApplicationRecorder):
        return recorder.channel_name
    return None
