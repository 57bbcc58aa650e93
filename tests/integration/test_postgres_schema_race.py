"""Processes started together on a fresh database create the same schemas and tables at once:
each must find them there or create them, never fail on a catalogue's unique index. Two sync
workers started together failed on `pg_namespace`'s before schemas were created under an
advisory lock; two API processes (`serve --workers 2`) on `pg_type`'s, when the view store's
tables were created after that lock was released."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

import psycopg
import pytest
from support.postgres_stores import OPENERS

from factledger.adapters.postgres.event_store import ensure_schema
from factledger.adapters.postgres_server import PostgresLocation

pytestmark = pytest.mark.integration

STARTERS = 8


@pytest.mark.parametrize("round_", range(5))
def test_starters_creating_one_schema_at_once_all_succeed(
    postgres: PostgresLocation, round_: int
) -> None:
    schema = f"race_{round_}_{uuid.uuid4().hex[:8]}"
    assert started_together(lambda: ensure_schema(postgres, schema)) == []
    with psycopg.connect(postgres.conninfo) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema,)
        ).fetchone()
    assert found == (1,)


@pytest.mark.parametrize("store", list(OPENERS))
@pytest.mark.parametrize("round_", range(3))
def test_stores_opened_together_on_a_fresh_schema_all_open(
    postgres: PostgresLocation, store: str, round_: int
) -> None:
    """Each store creates its tables (and the ledger its composite type) when it opens."""
    schema = f"race_{round_}_{uuid.uuid4().hex[:8]}"
    assert started_together(lambda: OPENERS[store](postgres, schema), starters=4) == []


def started_together(start: Callable[[], None], starters: int = STARTERS) -> list[BaseException]:
    """Runs `start` on `starters` threads released at once; the errors they raised."""
    barrier = threading.Barrier(starters)
    errors: list[BaseException] = []

    def starter() -> None:
        barrier.wait()
        try:
            start()
        except BaseException as error:  # collected: a thread's exception is otherwise lost
            errors.append(error)

    threads = [threading.Thread(target=starter) for _ in range(starters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors
