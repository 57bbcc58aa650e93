"""Versioned migrations of the PostgreSQL stores (yoyo on psycopg 3): applied once and
recorded in the store's schema, a later migration applied alone, starters racing on a fresh
schema all succeeding, a schema made before versioning adopted in place, and the lock gone
with a killed holder's connection."""

from __future__ import annotations

import asyncio
import threading
import uuid

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.migrations import migrate, recorded
from factledger.adapters.postgres.sync_store import MIGRATIONS as SYNC_MIGRATIONS
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres.view_store import MIGRATIONS as VIEW_MIGRATIONS
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation

pytestmark = pytest.mark.integration

FIRST = StoreMigration("0001-tables", ("CREATE TABLE {schema}.notes (id int PRIMARY KEY)",))
SECOND = StoreMigration("0002-body", ("ALTER TABLE {schema}.notes ADD COLUMN body text",))


def fresh_schema() -> str:
    return f"migrate_{uuid.uuid4().hex[:10]}"


def columns(postgres: PostgresLocation, schema: str, table: str) -> list[str]:
    with psycopg.connect(postgres.conninfo) as conn:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
            (schema, table),
        ).fetchall()
    return [str(row[0]) for row in rows]


def test_a_migration_applied_twice_is_a_no_op(postgres: PostgresLocation) -> None:
    schema = fresh_schema()
    assert migrate(postgres.conninfo, schema, "notes", [FIRST]) == ["0001-tables"]
    # A plain CREATE TABLE run again would fail: the second run applies nothing.
    assert migrate(postgres.conninfo, schema, "notes", [FIRST]) == []
    assert recorded(postgres.conninfo, schema, "notes") == ["0001-tables"]
    assert columns(postgres, schema, "notes") == ["id"]


def test_a_later_migration_is_applied_alone(postgres: PostgresLocation) -> None:
    schema = fresh_schema()
    migrate(postgres.conninfo, schema, "notes", [FIRST])
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("INSERT INTO {}.notes VALUES (1)").format(sql.Identifier(schema)))
    assert migrate(postgres.conninfo, schema, "notes", [FIRST, SECOND]) == ["0002-body"]
    assert columns(postgres, schema, "notes") == ["id", "body"]
    assert recorded(postgres.conninfo, schema, "notes") == ["0001-tables", "0002-body"]


def test_starters_racing_on_a_fresh_schema_all_succeed(postgres: PostgresLocation) -> None:
    schema = fresh_schema()
    applied: list[list[str]] = []
    failures: list[str] = []
    gate = threading.Barrier(6)

    def start() -> None:
        gate.wait()
        try:
            applied.append(migrate(postgres.conninfo, schema, "notes", [FIRST, SECOND]))
        except Exception as exc:  # the test reports any failure by its type
            failures.append(type(exc).__name__)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    assert sorted(applied) == [[]] * 5 + [["0001-tables", "0002-body"]]


def test_a_schema_made_before_versioning_is_adopted_in_place(postgres: PostgresLocation) -> None:
    schema = fresh_schema()
    ident = sql.Identifier(schema)
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        # The view store's tables as they were made before versioning, holding a view.
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(ident))
        conn.execute(
            sql.SQL(
                """CREATE TABLE {s}.view_documents (projection text NOT NULL,
                view text NOT NULL, key text COLLATE "C" NOT NULL, doc jsonb NOT NULL,
                PRIMARY KEY (projection, view, key))"""
            ).format(s=ident)
        )
        conn.execute(
            sql.SQL(
                "CREATE TABLE {s}.view_tracking (projection text PRIMARY KEY,"
                " position bigint NOT NULL)"
            ).format(s=ident)
        )
        conn.execute(
            sql.SQL("INSERT INTO {s}.view_tracking VALUES ('profiles', 7)").format(s=ident)
        )
    store = PostgresViewStore(postgres.conninfo, "profiles", schema=schema)
    try:
        assert store.position() == 7
    finally:
        store.close()
    assert recorded(postgres.conninfo, schema, "views") == [m.id for m in VIEW_MIGRATIONS]
    assert migrate(postgres.conninfo, schema, "views", VIEW_MIGRATIONS) == []


async def test_the_sync_store_records_its_migrations_and_its_position_row(
    postgres: PostgresLocation,
) -> None:
    schema = fresh_schema()
    store = await PostgresSyncStore.connect(postgres.conninfo, schema=schema, name="a")
    other = await PostgresSyncStore.connect(postgres.conninfo, schema=schema, name="b")
    try:
        assert await store.position() == await other.position() == 0
    finally:
        await store.close()
        await other.close()
    ids = await asyncio.to_thread(recorded, postgres.conninfo, schema, "sync")
    assert ids == [m.id for m in SYNC_MIGRATIONS]


def test_a_lock_held_by_a_lost_connection_is_released(postgres: PostgresLocation) -> None:
    schema = fresh_schema()
    migrate(postgres.conninfo, schema, "notes", [FIRST])
    holder = psycopg.connect(postgres.conninfo, autocommit=True)
    holder.execute(
        "SELECT pg_advisory_lock(hashtextextended('factledger.schema:' || %s, 0))", (schema,)
    )
    pid = holder.info.backend_pid
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        # The holder's process dies: the server ends its session, and its lock with it.
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert migrate(postgres.conninfo, schema, "notes", [FIRST, SECOND]) == ["0002-body"]
    holder.close()
