"""Contract of the `IdempotencyStore` port (`application.ledger.idempotency`), run over every
adapter: in-memory, SQLite and PostgreSQL (integration; each test in its own schema).

Each test holds two handles on one store, as two API processes would (the in-memory adapter's
two handles are one object: it serves one process). Leases and time-to-live run on a manual
wall clock. What a closed handle raises applies to the SQLite and PostgreSQL adapters only.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from support.stores import close

from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.application.ledger.idempotency import SWEEP_GRACE_S, ClaimStatus, IdempotencyScope
from factledger.application.ledger.ports import IdempotencyStore, IdempotencyStoreUnavailableError

DURABLE = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("sqlite_ledger_commands", id="sqlite-ledger-commands"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
ADAPTERS = [pytest.param("in_memory", id="in-memory"), *DURABLE]
SUBJECT_A = uuid.UUID("00000000-0000-0000-0000-00000000000a")
SUBJECT_B = uuid.UUID("00000000-0000-0000-0000-00000000000b")
SCOPE = IdempotencyScope("t1", "agent-1", SUBJECT_A, "key-00000001")


class FakeWallClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


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
    elif request.param == "sqlite_ledger_commands":
        # As ledger commands see it: responses may also be saved with the events (ADR 0037).
        path, ledger = tmp_path / "idempotency.sqlite", tmp_path / "ledger.sqlite"
        a = SqliteIdempotencyStore(
            path, ttl_s=100.0, lease_s=10.0, clock=clock, responses_with_events=ledger
        )
        b = SqliteIdempotencyStore(
            path, ttl_s=100.0, lease_s=10.0, clock=clock, responses_with_events=ledger
        )
        yield a.ledger_commands, b.ledger_commands
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


async def test_keys_are_scoped_per_tenant_principal_and_subject(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await a.complete(SCOPE, "fp-1", {"n": 1})
    other_principal = replace(SCOPE, principal="agent-2")
    other_tenant = replace(SCOPE, tenant="t2")
    other_subject = replace(SCOPE, subject_id=SUBJECT_B)
    assert (await b.claim(other_principal, "fp-9")).status is ClaimStatus.CLAIMED
    assert (await b.claim(other_tenant, "fp-9")).status is ClaimStatus.CLAIMED
    assert (await b.claim(other_subject, "fp-1")).status is ClaimStatus.CLAIMED
    await b.complete(other_subject, "fp-1", {"n": 2})
    assert (await a.claim(SCOPE, "fp-1")).body == {"n": 1}
    assert (await a.claim(other_subject, "fp-1")).body == {"n": 2}


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


async def test_only_the_claim_holder_can_complete(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await b.complete(SCOPE, "fp-2", {"n": "intruder"})
    assert (await a.claim(SCOPE, "fp-1")).status is ClaimStatus.IN_PROGRESS
    await a.complete(SCOPE, "fp-1", {"n": 1})
    await b.complete(SCOPE, "fp-2", {"n": "intruder"})
    assert (await b.claim(SCOPE, "fp-1")).body == {"n": 1}


async def test_completing_or_releasing_one_scope_leaves_the_others_alone(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    other_tenant = replace(SCOPE, tenant="t2")
    other_key = replace(SCOPE, key="key-00000002")
    other_subject = replace(SCOPE, subject_id=SUBJECT_B)
    for scope in (SCOPE, other_tenant, other_key, other_subject):
        assert (await a.claim(scope, "fp-1")).status is ClaimStatus.CLAIMED
    await b.complete(SCOPE, "fp-1", {"n": 1})
    await b.release(other_key, "fp-1")
    assert (await a.claim(SCOPE, "fp-1")).status is ClaimStatus.REPLAY
    assert (await a.claim(other_tenant, "fp-1")).status is ClaimStatus.IN_PROGRESS
    assert (await a.claim(other_key, "fp-1")).status is ClaimStatus.CLAIMED
    assert (await a.claim(other_subject, "fp-1")).status is ClaimStatus.IN_PROGRESS


async def test_a_saved_response_replays_exactly_as_stored(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    body: dict[str, object] = {
        "text": 'Grüße 👋 "quoted"\nnext line',
        "numbers": [0, -1, 2**53, 1.5],
        "flags": {"yes": True, "no": False, "none": None},
        "empty": {"list": [], "object": {}},
    }
    await a.claim(SCOPE, "fp-1")
    await a.complete(SCOPE, "fp-1", body)
    assert (await b.claim(SCOPE, "fp-1")).body == body


async def test_an_expired_claim_taken_over_by_another_request_is_theirs(
    stores: tuple[IdempotencyStore, IdempotencyStore], clock: FakeWallClock
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    clock.now += 11.0
    assert (await b.claim(SCOPE, "fp-2")).status is ClaimStatus.CLAIMED
    await a.complete(SCOPE, "fp-1", {"n": "late"})  # the first holder lost its lease
    await a.release(SCOPE, "fp-1")
    assert (await a.claim(SCOPE, "fp-2")).status is ClaimStatus.IN_PROGRESS
    await b.complete(SCOPE, "fp-2", {"n": 2})
    assert (await a.claim(SCOPE, "fp-2")).body == {"n": 2}


@pytest.mark.parametrize("stores", DURABLE, indirect=True)
async def test_a_closed_store_raises_its_port_error(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await close(a)
    with pytest.raises(IdempotencyStoreUnavailableError):
        await a.claim(SCOPE, "fp-1")
    with pytest.raises(IdempotencyStoreUnavailableError):
        await a.complete(SCOPE, "fp-1", {"n": 1})
    with pytest.raises(IdempotencyStoreUnavailableError):
        await a.sweep_expired(10)
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.IN_PROGRESS


async def _saved(store: IdempotencyStore, scope: IdempotencyScope, body: dict[str, object]) -> None:
    assert (await store.claim(scope, "fp")).status is ClaimStatus.CLAIMED
    await store.complete(scope, "fp", body)


async def test_forgetting_a_subject_deletes_its_saved_responses_and_no_others(
    stores: tuple[IdempotencyStore, IdempotencyStore],
) -> None:
    a, b = stores
    about_a = IdempotencyScope("t1", "agent-1", SUBJECT_A, "key-about-a")
    by_another = IdempotencyScope("t1", "service-1", SUBJECT_A, "key-about-a")
    about_b = IdempotencyScope("t1", "agent-1", SUBJECT_B, "key-about-b")
    other_tenant = IdempotencyScope("t2", "agent-1", SUBJECT_A, "key-about-a")
    running = IdempotencyScope("t1", "agent-1", SUBJECT_A, "key-running")
    await _saved(a, about_a, {"subject_id": str(SUBJECT_A), "value": "Canary Gazebo"})
    await _saved(a, by_another, {"kept": True, "index": 3})
    await _saved(a, about_b, {"subject_id": str(SUBJECT_B), "value": "other"})
    await _saved(a, other_tenant, {"subject_id": str(SUBJECT_A), "value": "other tenant"})
    assert (await a.claim(running, "fp")).status is ClaimStatus.CLAIMED

    assert await b.forget_subject("t1", SUBJECT_A) == 2

    # The forgotten responses are gone: a retry runs again instead of replaying them
    assert (await b.claim(about_a, "fp")).status is ClaimStatus.CLAIMED
    assert (await b.claim(by_another, "fp")).status is ClaimStatus.CLAIMED
    for kept in (about_b, other_tenant):
        assert (await a.claim(kept, "fp")).status is ClaimStatus.REPLAY
    # a request still running keeps its claim
    assert (await a.claim(running, "fp")).status is ClaimStatus.IN_PROGRESS
    await b.release(about_a, "fp")
    await b.release(by_another, "fp")
    assert await a.forget_subject("t1", SUBJECT_A) == 0


async def test_a_forgotten_response_leaves_no_bytes_in_the_sqlite_files(
    tmp_path: Path, clock: FakeWallClock
) -> None:
    path = tmp_path / "idempotency.sqlite"
    store = SqliteIdempotencyStore(path, clock=clock)
    for n in range(20):
        subject = SUBJECT_A if n == 7 else SUBJECT_B
        value = "Canary Gazebo Quartz" if n == 7 else f"kept-{n}"
        scope = IdempotencyScope("t1", "agent-1", subject, f"key-{n:08d}")
        await _saved(store, scope, {"subject_id": str(subject), "value": value})

    await store.forget_subject("t1", SUBJECT_A)

    files = [f for f in tmp_path.iterdir() if f.is_file()]  # noqa: ASYNC240 - a test's own dir
    assert files
    assert [f.name for f in files if b"Canary Gazebo" in f.read_bytes()] == []
    kept = IdempotencyScope("t1", "agent-1", SUBJECT_B, "key-00000008")
    assert (await store.claim(kept, "fp")).body == {"subject_id": str(SUBJECT_B), "value": "kept-8"}
    store.close()


async def test_a_renewed_claim_outlives_its_first_lease(
    stores: tuple[IdempotencyStore, IdempotencyStore], clock: FakeWallClock
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    for _ in range(3):  # a long command renews every few seconds
        clock.now += 6.0
        assert await a.renew(SCOPE, "fp-1")
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.IN_PROGRESS
    clock.now += 11.0  # the holder died: no more renewals
    assert (await b.claim(SCOPE, "fp-1")).status is ClaimStatus.CLAIMED


async def test_only_a_live_claim_of_this_fingerprint_is_renewed(
    stores: tuple[IdempotencyStore, IdempotencyStore], clock: FakeWallClock
) -> None:
    a, b = stores
    assert not await a.renew(SCOPE, "fp-1")  # nothing claimed
    await a.claim(SCOPE, "fp-1")
    assert not await b.renew(SCOPE, "fp-2")
    clock.now += 11.0
    assert not await a.renew(SCOPE, "fp-1")  # lapsed: never revived
    assert (await b.claim(SCOPE, "fp-2")).status is ClaimStatus.CLAIMED
    assert not await a.renew(SCOPE, "fp-1")  # taken over
    await b.complete(SCOPE, "fp-2", {"n": 2})
    assert not await b.renew(SCOPE, "fp-2")  # finished: its ttl stays as it is
    clock.now += 99.0
    assert (await a.claim(SCOPE, "fp-2")).status is ClaimStatus.REPLAY


async def test_a_sweep_deletes_expired_entries_only_and_at_most_its_limit(
    stores: tuple[IdempotencyStore, IdempotencyStore], clock: FakeWallClock
) -> None:
    a, b = stores
    old_responses = [replace(SCOPE, key=f"key-old-{n:04d}") for n in range(3)]
    for scope in old_responses:  # answered now: kept until now + 100 (the ttl)
        await a.claim(scope, "fp-1")
        await a.complete(scope, "fp-1", {"n": 1})
    clock.now += 60
    young = replace(SCOPE, key="key-young-01")  # answered at +60: kept until +160
    await a.claim(young, "fp-1")
    await a.complete(young, "fp-1", {"n": 2})
    abandoned = replace(SCOPE, key="key-abandoned")  # claimed at +60, lease until +70
    await a.claim(abandoned, "fp-1")
    clock.now += 41  # +101: the old responses and the abandoned claim have expired...
    assert await b.sweep_expired(10) == 0  # ...but a lapsed claim's holder may still answer
    clock.now += SWEEP_GRACE_S
    assert await b.sweep_expired(2) == 2
    assert await b.sweep_expired(10) == 2
    assert await b.sweep_expired(10) == 0  # the young response is within its grace still
    replay = await a.claim(young, "fp-1")  # (and a time to live ended is no replay)
    assert replay.status is ClaimStatus.CLAIMED
    for scope in (*old_responses, abandoned):
        assert (await a.claim(scope, "fp-2")).status is ClaimStatus.CLAIMED


async def test_a_live_response_is_never_swept(
    stores: tuple[IdempotencyStore, IdempotencyStore], clock: FakeWallClock
) -> None:
    a, b = stores
    await a.claim(SCOPE, "fp-1")
    await a.complete(SCOPE, "fp-1", {"n": 2})
    clock.now += 99  # the ttl is 100
    assert await b.sweep_expired(10) == 0
    replay = await a.claim(SCOPE, "fp-1")
    assert (replay.status, replay.body) == (ClaimStatus.REPLAY, {"n": 2})
