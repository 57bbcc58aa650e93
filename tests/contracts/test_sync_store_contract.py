"""Contract of the `SyncStore` port (`application.sync.ports`), run over every adapter.

Adapters: in-memory and PostgreSQL (integration; each test in its own schema). There is no
SQLite sync store: the embedded default runs the in-memory one beside the in-memory backend.
Leases and retry delays run on a manual monotonic clock in memory and on the server's clock in
PostgreSQL, so the tests use short delays and `Queue.wait` moves whichever clock applies.
Each test can open a second handle on the same queue, as a second worker process would (the
in-memory adapter's handles are one object). Durability and closed-handle errors apply to
PostgreSQL only.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from support.stores import close, new_schema

from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.sync.ports import SyncStore, SyncStoreUnavailableError
from factledger.application.sync.types import SyncItem, SyncKind

SUBJECT_A = uuid.UUID("00000000-0000-0000-0000-00000000000a")
SUBJECT_B = uuid.UUID("00000000-0000-0000-0000-00000000000b")
SUBJECT_C = uuid.UUID("00000000-0000-0000-0000-00000000000c")
# A lease (or a retry delay) that a test waits out: long enough that the few round trips a
# test makes while it must hold fit inside it on a loaded machine.
LEASE_S = 2.0
HELD_S = 60.0  # a lease that must hold to the test's end, however slow the machine

DURABLE = [pytest.param("postgres", id="postgres", marks=pytest.mark.integration)]
ADAPTERS = [pytest.param("in_memory", id="in-memory"), *DURABLE]


class Ticks:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Queue:
    """Handles on one sync queue; `another()` opens one more; `wait` lets time pass."""

    open_handle: Callable[[], Awaitable[SyncStore]]
    ticks: Ticks | None  # None: the adapter reads the database server's clock
    opened: list[SyncStore] = field(default_factory=list)

    async def another(self) -> SyncStore:
        self.opened.append(await self.open_handle())
        return self.opened[-1]

    async def wait(self, seconds: float) -> None:
        if self.ticks is None:
            await asyncio.sleep(seconds)
        else:
            self.ticks.now += seconds


async def _queue(request: pytest.FixtureRequest) -> AsyncIterator[Queue]:
    kind: str = request.param
    if kind == "in_memory":
        ticks = Ticks()
        shared = InMemorySyncStore(monotonic=ticks)

        async def open_memory() -> SyncStore:
            return shared

        queue = Queue(open_memory, ticks)
    else:
        location: PostgresLocation = request.getfixturevalue("postgres")
        schema = new_schema(location, "sync")

        async def open_postgres() -> SyncStore:
            return await PostgresSyncStore.connect(location.conninfo, schema=schema)

        queue = Queue(open_postgres, None)
    yield queue
    for handle in queue.opened:
        await close(handle)


@pytest.fixture(params=ADAPTERS)
async def queue(request: pytest.FixtureRequest) -> AsyncIterator[Queue]:
    async for made in _queue(request):
        yield made


@pytest.fixture(params=DURABLE)
async def durable(request: pytest.FixtureRequest) -> AsyncIterator[Queue]:
    async for made in _queue(request):
        yield made


@pytest.fixture
async def store(queue: Queue) -> SyncStore:
    return await queue.another()


def item(position: int, n: int = 0, subject: uuid.UUID = SUBJECT_A, tenant: str = "t1") -> SyncItem:
    return SyncItem(
        f"{position}.{n}",
        position,
        subject,
        SyncKind.PROFILE_VERSION,
        (f"profile.v{position}",),
        tenant=tenant,
    )


def ids(items: list[SyncItem]) -> list[str]:
    return [i.item_id for i in items]


async def claim_all(
    store: SyncStore, worker: str = "w1", lease_s: float = HELD_S
) -> list[SyncItem]:
    return await store.claim(worker, limit=100, lease_s=lease_s)


async def test_a_new_queue_is_empty_at_position_zero(store: SyncStore) -> None:
    assert await store.position() == 0
    assert await store.pending_count() == 0
    assert await claim_all(store) == []
    assert await store.dead_letters() == []


async def test_enqueue_moves_the_position_only_from_where_it_was(store: SyncStore) -> None:
    assert await store.enqueue([item(1), item(3)], after=0, upto=4)
    assert await store.position() == 4
    assert not await store.enqueue([item(5)], after=0, upto=5)  # another worker fed first
    assert not await store.enqueue([item(5)], after=3, upto=5)
    assert await store.position() == 4
    assert await store.pending_count() == 2
    assert await store.enqueue([], after=4, upto=9)  # events with nothing to sync
    assert await store.position() == 9


async def test_enqueueing_an_existing_item_id_adds_nothing(store: SyncStore) -> None:
    assert await store.enqueue([item(1), item(1, 1)], after=0, upto=1)
    assert await store.enqueue([item(1), item(2)], after=1, upto=2)
    assert await store.pending_count() == 3
    assert ids(await claim_all(store)) == ["1.0"]  # one subject: one item at a time


async def test_items_read_back_as_enqueued(store: SyncStore) -> None:
    written = SyncItem(
        "7.2",
        7,
        SUBJECT_B,
        SyncKind.FORGET,
        ("field:supplier", "profile.v3", "change.9"),
        tenant="t2",
    )
    await store.enqueue([written], after=0, upto=7)
    assert await claim_all(store) == [written]


async def test_concurrent_feeders_enqueue_one_batch_once(queue: Queue) -> None:
    a, b = await queue.another(), await queue.another()
    outcomes = await asyncio.gather(
        *(h.enqueue([item(1), item(2, subject=SUBJECT_B)], after=0, upto=2) for h in [a, b] * 3)
    )
    assert outcomes.count(True) == 1
    assert await a.position() == 2
    assert await b.pending_count() == 2


async def test_claim_hands_out_the_oldest_items_up_to_the_limit(store: SyncStore) -> None:
    subjects = [SUBJECT_A, SUBJECT_B, SUBJECT_C]
    await store.enqueue([item(p, subject=subjects[p - 1]) for p in (1, 2, 3)], after=0, upto=3)
    assert ids(await store.claim("w1", limit=2, lease_s=HELD_S)) == ["1.0", "2.0"]
    assert ids(await store.claim("w2", limit=2, lease_s=HELD_S)) == ["3.0"]
    assert await store.claim("w3", limit=2, lease_s=HELD_S) == []


async def test_a_subjects_items_are_handed_out_in_ledger_order(store: SyncStore) -> None:
    batch = [item(1, 0), item(1, 1), item(2, subject=SUBJECT_B), item(3), item(4, 0)]
    await store.enqueue(batch, after=0, upto=4)
    assert ids(await claim_all(store)) == ["1.0", "2.0"]
    await store.complete("1.0")
    assert ids(await claim_all(store)) == ["1.1"]
    await store.complete("1.1")
    await store.complete("2.0")
    assert ids(await claim_all(store)) == ["3.0"]
    await store.complete("3.0")
    assert ids(await claim_all(store)) == ["4.0"]


async def test_a_lapsed_lease_gives_the_item_back(queue: Queue) -> None:
    store = await queue.another()
    await store.enqueue([item(1), item(2, subject=SUBJECT_B)], after=0, upto=2)
    assert ids(await store.claim("crashed", limit=1, lease_s=LEASE_S)) == ["1.0"]
    assert ids(await claim_all(store, "w2", lease_s=LEASE_S)) == ["2.0"]
    await queue.wait(LEASE_S + 0.2)
    assert ids(await claim_all(store, "w3")) == ["1.0", "2.0"]


async def test_complete_removes_an_item_and_is_idempotent(store: SyncStore) -> None:
    await store.enqueue([item(1), item(2)], after=0, upto=2)
    await claim_all(store)
    await store.complete("1.0")
    await store.complete("1.0")
    await store.complete("99.0")
    assert await store.pending_count() == 1
    assert ids(await claim_all(store)) == ["2.0"]


async def test_complete_many_removes_the_items_named_and_is_idempotent(store: SyncStore) -> None:
    await store.enqueue([item(1), item(2), item(3)], after=0, upto=3)
    await claim_all(store)
    await store.complete_many(["1.0", "3.0"])
    await store.complete_many(["1.0", "99.0"])
    await store.complete_many([])
    assert await store.pending_count() == 1
    assert ids(await claim_all(store)) == ["2.0"]


async def test_a_failed_item_comes_back_after_its_retry_delay(queue: Queue) -> None:
    store = await queue.another()
    await store.enqueue([item(1), item(2), item(3, subject=SUBJECT_B)], after=0, upto=3)
    await claim_all(store, lease_s=LEASE_S)
    await store.fail("1.0", error_type="MemoryUnavailableError", retry_in_s=LEASE_S)
    assert ids(await claim_all(store)) == []  # 3.0 is leased; 2.0 waits behind 1.0
    assert await store.pending_count() == 3
    await queue.wait(LEASE_S + 0.2)
    retried = await claim_all(store)
    assert ids(retried) == ["1.0", "3.0"]
    assert retried[0].attempts == 1
    assert retried[1].attempts == 0


async def test_a_dead_item_is_listed_and_never_blocks_later_ones(store: SyncStore) -> None:
    await store.enqueue([item(1), item(2), item(3, subject=SUBJECT_B)], after=0, upto=3)
    # 3.0 stays leased to the end: only 2.0 is claimable after.
    await claim_all(store)
    await store.fail("1.0", error_type="MemoryTimeoutError", retry_in_s=None)
    assert await store.pending_count() == 2
    (dead,) = await store.dead_letters()
    assert (dead.item_id, dead.position, dead.subject_id) == ("1.0", 1, SUBJECT_A)
    assert (dead.kind, dead.targets) == (SyncKind.PROFILE_VERSION, ("profile.v1",))
    assert (dead.attempts, dead.error_type) == (1, "MemoryTimeoutError")
    assert ids(await claim_all(store)) == ["2.0"]


async def test_dead_letters_come_oldest_first_up_to_the_limit(store: SyncStore) -> None:
    subjects = [SUBJECT_A, SUBJECT_B, SUBJECT_C]
    await store.enqueue([item(p, subject=subjects[p - 1]) for p in (1, 2, 3)], after=0, upto=3)
    await claim_all(store)
    for item_id in ("3.0", "1.0", "2.0"):
        await store.fail(item_id, error_type="Boom", retry_in_s=None)
    assert [d.item_id for d in await store.dead_letters()] == ["1.0", "2.0", "3.0"]
    assert [d.item_id for d in await store.dead_letters(limit=2)] == ["1.0", "2.0"]


async def test_retry_dead_makes_the_chosen_dead_letters_pending_again(store: SyncStore) -> None:
    subjects = [SUBJECT_A, SUBJECT_B, SUBJECT_C]
    await store.enqueue([item(p, subject=subjects[p - 1]) for p in (1, 2, 3)], after=0, upto=3)
    await claim_all(store)
    for item_id in ("1.0", "2.0", "3.0"):
        await store.fail(item_id, error_type="Boom", retry_in_s=None)
    assert await store.retry_dead(["2.0", "99.0"]) == 1
    assert [d.item_id for d in await store.dead_letters()] == ["1.0", "3.0"]
    again = await claim_all(store)
    assert ids(again) == ["2.0"]
    assert again[0].attempts == 0
    assert await store.retry_dead() == 2
    assert await store.retry_dead() == 0
    assert await store.dead_letters() == []
    assert ids(await claim_all(store)) == ["1.0", "3.0"]


async def test_dead_letters_of_one_tenant_are_found_past_any_number_of_others(
    store: SyncStore,
) -> None:
    others = [item(p, subject=uuid.UUID(int=p), tenant="t2") for p in range(1, 1201)]
    mine = [item(p, subject=SUBJECT_A) for p in range(1201, 1204)]
    assert await store.enqueue([*others, *mine], after=0, upto=1203)
    while claimed := await store.claim("w1", limit=2000, lease_s=30.0):
        for dying in claimed:
            await store.fail(dying.item_id, error_type="Boom", retry_in_s=None)

    first = await store.dead_letters(tenant="t1", limit=2)
    assert [d.item_id for d in first] == ["1201.0", "1202.0"]
    rest = await store.dead_letters(tenant="t1", after=first[-1].item_id, limit=2)
    assert [d.item_id for d in rest] == ["1203.0"]
    assert len(await store.dead_letters(limit=2000)) == 1203  # no tenant: every tenant's
    assert len(await store.dead_letters(tenant="t2", after="1100.0", limit=500)) == 100


async def test_retry_dead_of_one_tenant_leaves_the_others_dead(store: SyncStore) -> None:
    await store.enqueue(
        [item(1), item(2, subject=SUBJECT_B, tenant="t2"), item(3, subject=SUBJECT_C)],
        after=0,
        upto=3,
    )
    await claim_all(store)
    for item_id in ("1.0", "2.0", "3.0"):
        await store.fail(item_id, error_type="Boom", retry_in_s=None)
    assert await store.retry_dead(["2.0"], tenant="t1") == 0
    assert await store.retry_dead(tenant="t1") == 2
    assert [d.item_id for d in await store.dead_letters()] == ["2.0"]


async def test_concurrent_claims_never_hand_out_one_item_twice(queue: Queue) -> None:
    a, b = await queue.another(), await queue.another()
    subjects = [uuid.UUID(int=n + 1) for n in range(12)]
    await a.enqueue([item(n + 1, subject=s) for n, s in enumerate(subjects)], after=0, upto=12)
    claims = await asyncio.gather(
        *(h.claim(f"w{n}", limit=3, lease_s=30.0) for n, h in enumerate([a, b] * 4))
    )
    handed_out = [i for claim in claims for i in ids(claim)]
    assert sorted(handed_out) == sorted(f"{n + 1}.0" for n in range(12))


async def test_a_claim_passes_over_every_item_leased_to_others(queue: Queue) -> None:
    # The PostgreSQL claim cuts its candidates at four times its limit (ADR 0103): the items
    # other workers hold must never count against that cut.
    a, b = await queue.another(), await queue.another()
    subjects = [uuid.UUID(int=n + 1) for n in range(12)]
    later = [item(n + 13, subject=s) for n, s in enumerate(subjects)]  # each subject's second
    batch = [item(n + 1, subject=s) for n, s in enumerate(subjects)] + later
    await a.enqueue(batch, after=0, upto=24)
    assert len(await a.claim("w1", limit=10, lease_s=30.0)) == 10

    assert ids(await b.claim("w2", limit=1, lease_s=30.0)) == ["11.0"]
    assert ids(await b.claim("w3", limit=5, lease_s=30.0)) == ["12.0"]


async def test_the_queue_survives_closing_the_store(durable: Queue) -> None:
    first = await durable.another()
    await first.enqueue([item(1), item(2, subject=SUBJECT_B)], after=0, upto=2)
    await first.claim("w1", limit=1, lease_s=LEASE_S)
    await first.fail("1.0", error_type="Boom", retry_in_s=None)
    await close(first)
    reopened = await durable.another()
    assert await reopened.position() == 2
    assert [d.item_id for d in await reopened.dead_letters()] == ["1.0"]
    assert ids(await claim_all(reopened)) == ["2.0"]


async def test_a_closed_store_raises_its_port_error(durable: Queue) -> None:
    handle = await durable.another()
    await close(handle)
    with pytest.raises(SyncStoreUnavailableError):
        await handle.position()
    with pytest.raises(SyncStoreUnavailableError):
        await handle.enqueue([item(1)], after=0, upto=1)
