"""Contract of the `IdempotencyStore` port, run over the in-memory, SQLite and PostgreSQL
adapters (the PostgreSQL ones on the embedded server, each in its own schema)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.application.ledger.idempotency import (
    ClaimStatus,
    IdempotencyScope,
    IdempotencyStore,
)

ADAPTERS = [
    pytest.param("in_memory", id="in-memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
SCOPE = IdempotencyScope("t1", "agent-1", "key-00000001")


class FakeWallClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


Factory = Callable[[], "asyncio.Future[IdempotencyStore]"]


@pytest.fixture
def clock() -> FakeWallClock:
    return FakeWallClock()


@pytest.fixture(params=ADAPTERS)
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeWallClock
) -> AsyncIterator[tuple[IdempotencyStore, IdempotencyStore]]:
    """Two handles on one store, as two API processes would hold them."""
    if request.param == "in_memory":
        one = InMemoryIdempotencyStore(ttl_s=100.0, lease_s=10.0, clock=clock)
        yield one, one
    elif request.param == "sqlite":
        path = tmp_path / "idempotency.sqlite"
        a = SqliteIdempotencyStore(path, ttl_s=100.0, lease_s=10.0, clock=clock)
        b = SqliteIdempotencyStore(path, ttl_s=100.0, lease_s=10.0, clock=clock)
        yield a, b
        a.close()
        b.close()
    else:
        location: PostgresLocation = request.getfixturevalue("postgres")
        schema = f"idem_{uuid.uuid4().hex[:12]}"
        pa = await PostgresIdempotencyStore.connect(
            location.conninfo, schema=schema, ttl_s=100.0, lease_s=10.0, clock=clock
        )
        pb = await PostgresIdempotencyStore.connect(
            location.conninfo, schema=schema, ttl_s=100.0, lease_s=10.0, clock=clock
        )
        yield pa, pb
        await pa.close()
        await pb.close()


async def test_first_claim_wins_and_a_finished_twin_replays_on_the_other_handle(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    assert (await a.claim(SCOPE, "fp-1")).status is ClaimStatus.CLAIMED
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.IN_PROGRESS
    await a.complete(SCOPE, "fp-1", {"index": 3, "nested": {"ok": True}})
    replay = await b.claim(SCOPE, "fp-1")
    assert replay.status is ClaimStatus.REPLAY
    assert replay.body == {"index": 3, "nested": {"ok": True}}


async def test_a_reused_key_with_another_fingerprint_is_a_mismatch(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    assert (await b.claim(SCOPE, "fp-2")).status is ClaimStatus.MISMATCH
    await a.complete(SCOPE, "fp-1", {"n": 1})
    assert (await b.claim(SCOPE, "fp-2")).status is ClaimStatus.MISMATCH


async def test_keys_are_scoped_per_tenant_and_principal(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await a.complete(SCOPE, "fp-1", {"n": 1})
    other_principal = IdempotencyScope("t1", "agent-2", SCOPE.key)
    other_tenant = IdempotencyScope("t2", "agent-1", SCOPE.key)
    assert (await b.claim(other_principal, "fp-9")).status is ClaimStatus.CLAIMED
    assert (await b.claim(other_tenant, "fp-9")).status is ClaimStatus.CLAIMED


async def test_release_frees_the_key_for_a_retry(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await a.release(SCOPE, "fp-2")  # not the holder's fingerprint: nothing happens
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.IN_PROGRESS
    await a.release(SCOPE, "fp-1")
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.CLAIMED


async def test_release_never_drops_a_finished_response(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await a.complete(SCOPE, "fp-1", {"n": 1})
    await a.release(SCOPE, "fp-1")
    assert (await b.claim(SCOPE, "fp-1")).body == {"n": 1}


async def test_an_abandoned_claim_expires_after_its_lease(
    stores: tuple[IdempotencyStore, IdempotencyStore], clock: FakeWallClock
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")  # the process holding it dies here
    clock.now += 9.0
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.IN_PROGRESS
    clock.now += 2.0
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.CLAIMED


async def test_a_finished_response_is_kept_for_its_ttl_then_the_key_is_free(
    stores: tuple[IdempotencyStore, IdempotencyStore], clock: FakeWallClock
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await a.complete(SCOPE, "fp-1", {"n": 1})
    clock.now += 99.0
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.REPLAY
    clock.now += 2.0
    assert (await b.claim(SCOPE, "fp-2")).status is ClaimStatus.CLAIMED


async def test_concurrent_first_claims_let_exactly_one_run(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    outcomes = await asyncio.gather(
        *(store.claim(SCOPE, "fp-1") for store in (a, b, a, b, a, b, a, b))
    )
    statuses = sorted(o.status.value for o in outcomes)
    assert statuses.count(ClaimStatus.CLAIMED.value) == 1
    assert statuses.count(ClaimStatus.IN_PROGRESS.value) == 7
