"""The review queue's reads follow the standby rule: a request the API lets read from the
standby (`read_routing`) reads the standby's queue once it has reached the position the request
needs; every other read, and every read after the request wrote, reads the primary.

A second database of the same server stands in for the standby: it holds other rows, so which
one answered is plain to see.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator

import psycopg
import pytest
from support.queue_seed import item_row

from factledger.adapters.postgres.queue_store import PostgresQueueStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.read_routing import (
    reading_from_standby,
    require_views_at,
    wrote_on_primary,
)
from factledger.application.review_queue.ports import QueueStore
from factledger.application.review_queue.queue import QueueCursor, QueueFilter


def fill(store: QueueStore, position: int, field: str) -> None:
    with store.transaction() as txn:
        txn.add(item_row(position, field))
        txn.advance(position)


@pytest.fixture
def stores(postgres: PostgresLocation) -> Iterator[tuple[PostgresQueueStore, PostgresQueueStore]]:
    """(the primary's store, reading the standby; the standby's own store, to fill it)."""
    name = f"standby_{secrets.token_hex(4)}"
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    standby = dataclasses.replace(postgres, dbname=name)
    schema = f"rq_{secrets.token_hex(4)}"
    on_standby = PostgresQueueStore(standby.conninfo, schema=schema)
    primary = PostgresQueueStore(postgres.conninfo, schema=schema, read_conninfo=standby.conninfo)
    try:
        yield primary, on_standby
    finally:
        primary.close()
        on_standby.close()
        with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def fields(store: QueueStore) -> list[str]:
    return [r.field for r in store.page("t1", QueueFilter(), QueueCursor(), 10).rows]


def test_a_routed_read_uses_the_standby_once_it_has_the_position_needed(
    stores: tuple[PostgresQueueStore, PostgresQueueStore],
) -> None:
    primary, standby = stores
    fill(primary, 2, "on primary")
    fill(standby, 1, "on standby")

    assert fields(primary) == ["on primary"]  # no routed request: the primary
    with reading_from_standby(True):
        assert fields(primary) == ["on standby"]
        assert primary.choices("t1").field == ["on standby"]
    with reading_from_standby(True):
        require_views_at(primary.position())  # the standby (at 1) is behind the primary (2)
        assert fields(primary) == ["on primary"]
    with reading_from_standby(True):
        wrote_on_primary()
        assert fields(primary) == ["on primary"]
    with reading_from_standby(False):
        assert fields(primary) == ["on primary"]
    assert primary.position() == 2  # the follower's position is always the primary's
