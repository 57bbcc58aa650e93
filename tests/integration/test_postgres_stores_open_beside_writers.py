"""A process that opens a store on tables that are already there runs none of their DDL, so it
waits for no write in flight (issue 19: a replacement API process started while the other
served traffic; its `CREATE INDEX IF NOT EXISTS` queued behind the writers and held up every
write after it, and a session end died in the deadlock that followed).

Each store is opened once to create its tables; then another connection holds every table of
the schema the way a writer does (`ROW EXCLUSIVE`, what an insert takes) while the store is
opened again. The second open must finish while those locks are held."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest
from psycopg import sql
from support.postgres_stores import OPENERS

from factledger.adapters.postgres_server import PostgresLocation

pytestmark = pytest.mark.integration

HOLD_FOR_S = 20.0  # far longer than an open that waits for nothing takes


@pytest.mark.parametrize("store", list(OPENERS))
def test_a_store_opened_again_waits_for_no_writer(postgres: PostgresLocation, store: str) -> None:
    opens = OPENERS[store]
    schema = f"open_{uuid.uuid4().hex[:10]}"
    opens(postgres, schema)
    with psycopg.connect(postgres.conninfo) as writer:
        tables = [
            str(row[0])
            for row in writer.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
            ).fetchall()
        ]
        assert len(tables) > 1  # the store's own, and the marks of what has run
        held = sql.SQL(", ").join(sql.Identifier(schema, t) for t in tables)
        writer.execute(sql.SQL("LOCK TABLE {} IN ROW EXCLUSIVE MODE").format(held))

        opened = threading.Event()
        errors: list[BaseException] = []

        def open_again() -> None:
            try:
                opens(postgres, schema)
                opened.set()
            except BaseException as error:  # collected: a thread's exception is otherwise lost
                errors.append(error)

        thread = threading.Thread(target=open_again, daemon=True)
        thread.start()
        finished_while_held = opened.wait(HOLD_FOR_S)
        writer.rollback()  # lets a blocked open through, so the thread ends either way
        thread.join(timeout=60)
    assert errors == []
    assert finished_while_held, f"the {store} waited for the writer's locks"
