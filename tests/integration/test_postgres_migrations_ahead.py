"""The PostgreSQL stores' migrations started ahead (`postgres.migrations.migrate_ahead`, one
thread and connection per schema, side by side): a store takes its migration's result instead
of migrating again, a failed one leaves the store to migrate and report its own error, no
result outlives the opening that started it, and a runtime's every PostgreSQL store takes
the result of the migration started for it (the list in `api.bootstrap.migrations_ahead`
names the schemas and stores the stores themselves use), pgvector's backend included."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from pydantic import SecretStr
from support.api_harness import TEST_AUTH

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.pgvector import backend as pgvector_backend
from factledger.adapters.postgres import migrations
from factledger.adapters.postgres.migrations import (
    MigrationsAhead,
    StoreTables,
    migrate,
    migrate_ahead,
    recorded,
)
from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.settings import Settings

pytestmark = pytest.mark.integration

NOTES = (StoreMigration("0001-tables", ("CREATE TABLE {schema}.notes (id int PRIMARY KEY)",)),)
TAGS = (StoreMigration("0001-tables", ("CREATE TABLE {schema}.tags (id int PRIMARY KEY)",)),)
BROKEN = (StoreMigration("0001-tables", ("CREATE TABLE {schema}.broken (id no_such_type)",)),)


def fresh_schema() -> str:
    return f"ahead_{uuid.uuid4().hex[:10]}"


def test_stores_take_the_results_of_their_migrations_ahead(postgres: PostgresLocation) -> None:
    one, two = fresh_schema(), fresh_schema()
    ahead = migrate_ahead(
        postgres.conninfo,
        [
            StoreTables(one, "notes", NOTES),
            StoreTables(one, "tags", TAGS),
            StoreTables(two, "notes", NOTES),
        ],
    )
    assert migrate(postgres.conninfo, one, "notes", NOTES) == ["0001-tables"]
    assert migrate(postgres.conninfo, one, "tags", TAGS) == ["0001-tables"]
    assert migrate(postgres.conninfo, two, "notes", NOTES) == ["0001-tables"]
    ahead.discard()
    # Taken once: a store opened again checks the database as before.
    assert migrate(postgres.conninfo, one, "notes", NOTES) == []
    assert recorded(postgres.conninfo, two, "notes") == ["0001-tables"]


def test_a_failed_migration_ahead_leaves_the_store_to_report_its_own_error(
    postgres: PostgresLocation,
) -> None:
    schema = fresh_schema()
    ahead = migrate_ahead(postgres.conninfo, [StoreTables(schema, "broken", BROKEN)])
    ahead.join()
    with pytest.raises(psycopg.errors.UndefinedObject):
        migrate(postgres.conninfo, schema, "broken", BROKEN)
    ahead.discard()


def test_a_result_no_store_took_is_not_trusted_later(postgres: PostgresLocation) -> None:
    schema = fresh_schema()
    ahead = migrate_ahead(postgres.conninfo, [StoreTables(schema, "notes", NOTES)])
    ahead.join()
    ahead.discard()
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    assert migrate(postgres.conninfo, schema, "notes", NOTES) == ["0001-tables"]


async def test_every_postgres_store_of_a_runtime_takes_its_migration_ahead(
    postgres: PostgresLocation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new database, so that every store has its migrations to apply: about a second.
    name = f"ahead_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    auth = f"{postgres.user}:{postgres.password}"
    started: list[object] = []
    left: list[object] = []
    discard = MigrationsAhead.discard

    def recording(self: MigrationsAhead) -> None:
        keys = self._keys
        with migrations._ahead_lock:
            left.extend(key for key in keys if key in migrations._ahead)
        started.extend(keys)
        discard(self)

    monkeypatch.setattr(MigrationsAhead, "discard", recording)
    migrated_on_open: list[object] = []

    async def migrating_on_open(*args: object) -> list[int]:
        migrated_on_open.append(args)
        return []

    # The backend migrates on its own only when it did not take its migrations ahead.
    monkeypatch.setattr(pgvector_backend, "apply_migrations", migrating_on_open)
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(f"postgresql://{auth}@/{name}?host={postgres.host}"),
        event_store={"kind": "postgres"},  # type: ignore[arg-type]
        views={"kind": "postgres"},  # type: ignore[arg-type]
        short_term={"kind": "postgres"},  # type: ignore[arg-type]
        sync={"store": {"kind": "postgres"}},  # type: ignore[arg-type]
        backend={"kind": "pgvector"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    async with open_runtime(settings) as runtime:
        assert (await runtime.backend.health()).ok
    stores = {key[2] for key in started}  # type: ignore[index]
    assert {"keys", "views", "review_queue", "session_buffer", "sync"} <= stores
    assert left == []
    assert migrated_on_open == []
