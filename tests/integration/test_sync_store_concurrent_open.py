"""Several processes opening the sync store at once on a fresh schema all start: its DDL is
serialised (two API processes started together deadlocked on it, and one failed to start)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from factledger.adapters.postgres.event_store import ensure_schema
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres_server import PostgresLocation

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("round_", range(3))
async def test_concurrent_opens_of_a_fresh_sync_store_all_succeed(
    postgres: PostgresLocation, round_: int
) -> None:
    schema = f"sync_open_{uuid.uuid4().hex[:10]}"
    ensure_schema(postgres, schema)  # as the composition root does before opening the store
    stores = await asyncio.gather(
        *(PostgresSyncStore.connect(postgres.conninfo, schema=schema) for _ in range(8)),
        return_exceptions=True,
    )
    failures = [type(s).__name__ for s in stores if isinstance(s, BaseException)]
    for store in stores:
        if isinstance(store, PostgresSyncStore):
            await store.close()
    assert failures == []
