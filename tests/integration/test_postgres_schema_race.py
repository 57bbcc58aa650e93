"""Processes started together on a fresh database create the same schemas at once: each
must find the schema there or create it, never fail on `pg_namespace`'s unique index (two sync
workers started together did, before schemas were created under an advisory lock)."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest

from factledger.adapters.postgres.event_store import ensure_schema
from factledger.adapters.postgres_server import PostgresLocation

pytestmark = pytest.mark.integration

STARTERS = 8


@pytest.mark.parametrize("round_", range(5))
def test_starters_creating_one_schema_at_once_all_succeed(
    postgres: PostgresLocation, round_: int
) -> None:
    schema = f"race_{round_}_{uuid.uuid4().hex[:8]}"
    start = threading.Barrier(STARTERS)
    errors: list[BaseException] = []

    def starter() -> None:
        start.wait()
        try:
            ensure_schema(postgres, schema)
        except BaseException as error:  # collected: a thread's exception is otherwise lost
            errors.append(error)

    threads = [threading.Thread(target=starter) for _ in range(STARTERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    with psycopg.connect(postgres.conninfo) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema,)
        ).fetchone()
    assert found == (1,)
