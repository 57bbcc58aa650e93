"""The per-request idempotency helper over a store: first result kept and replayed, reuse with
another request refused (naming the header), in-flight twins told to retry, failures freeing the
key; plus the key syntax and the in-memory store's size bound. The store's own rules are the
contract in `tests/unit/adapters/test_idempotency_store_contract.py`."""

from __future__ import annotations

import asyncio
from uuid import UUID

import pytest
from fastapi import Response
from pydantic import BaseModel

from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.api.http.errors import (
    IdempotencyKeyReusedError,
    InvalidParameterError,
    RequestInProgressError,
)
from factledger.api.http.idempotency import Idempotency, parse_key
from factledger.application.ledger.idempotency import ClaimStatus, IdempotencyScope

SUBJECT = UUID("00000000-0000-0000-0000-00000000000a")
SCOPE = IdempotencyScope("t1", "agent-1", SUBJECT, "key-00000001")


class Out(BaseModel):
    n: int


class Counter:
    def __init__(self) -> None:
        self.runs = 0

    async def __call__(self) -> Out:
        self.runs += 1
        return Out(n=self.runs)


def helper(
    store: InMemoryIdempotencyStore, fingerprint: str = "fp"
) -> tuple[Idempotency, Response]:
    response = Response()
    return Idempotency(store, SCOPE, fingerprint, response), response


async def test_the_first_request_runs_and_its_twin_gets_the_saved_result() -> None:
    store, command = InMemoryIdempotencyStore(), Counter()
    first, _ = helper(store)
    twin, twin_response = helper(store)
    assert await first.run(command, Out) == Out(n=1)
    assert await twin.run(command, Out) == Out(n=1)
    assert command.runs == 1
    assert twin_response.headers["Idempotent-Replayed"] == "true"


async def test_a_key_reused_for_another_request_is_refused_naming_the_header() -> None:
    store, command = InMemoryIdempotencyStore(), Counter()
    await helper(store)[0].run(command, Out)
    with pytest.raises(IdempotencyKeyReusedError) as raised:
        await helper(store, "other")[0].run(command, Out)
    assert raised.value.field == "Idempotency-Key"
    assert command.runs == 1


async def test_a_twin_of_a_running_request_is_told_to_retry_later() -> None:
    store, command = InMemoryIdempotencyStore(), Counter()
    await store.claim(SCOPE, "fp")  # another process is running it
    with pytest.raises(RequestInProgressError, match="retry later"):
        await helper(store)[0].run(command, Out)
    assert command.runs == 0


async def test_a_failed_request_frees_its_key_so_the_retry_runs() -> None:
    store = InMemoryIdempotencyStore()

    async def boom() -> Out:
        raise RuntimeError("downstream failed")

    with pytest.raises(RuntimeError):
        await helper(store)[0].run(boom, Out)
    assert await helper(store)[0].run(Counter(), Out) == Out(n=1)


async def test_without_a_key_every_request_runs() -> None:
    command = Counter()
    for _ in range(2):
        await Idempotency(InMemoryIdempotencyStore(), None, "fp", Response()).run(command, Out)
    assert command.runs == 2


async def test_the_in_memory_store_stays_bounded() -> None:
    small = InMemoryIdempotencyStore(max_entries=2)
    for n in range(3):
        scope = IdempotencyScope("t1", "a", SUBJECT, f"key-{n:08d}")
        await small.claim(scope, "fp")
        await small.complete(scope, "fp", {"n": n})
    evicted = await small.claim(IdempotencyScope("t1", "a", SUBJECT, "key-00000000"), "fp")
    kept = await small.claim(IdempotencyScope("t1", "a", SUBJECT, "key-00000002"), "fp")
    assert evicted.status is ClaimStatus.CLAIMED
    assert kept.body == {"n": 2}


def test_keys_must_be_plain_and_bounded() -> None:
    assert parse_key(None) is None
    assert parse_key("abc-123_x:9") == "abc-123_x:9"
    for bad in ("short", "x" * 129, "has space in it", "semi;colon-key"):
        with pytest.raises(InvalidParameterError):
            parse_key(bad)


class SteppedWallClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_a_command_longer_than_the_lease_keeps_its_key() -> None:
    clock = SteppedWallClock()
    store = InMemoryIdempotencyStore(lease_s=1.0, clock=clock)
    response = Response()
    first = Idempotency(store, SCOPE, "fp", response, renew_every_s=0.001)
    twin_statuses: list[ClaimStatus] = []

    async def long_command() -> Out:
        for _ in range(5):  # 4.5 s of wall clock in all, the renewal running in between
            clock.now += 0.9
            await asyncio.sleep(0.05)
            twin_statuses.append((await store.claim(SCOPE, "fp")).status)
        return Out(n=1)

    assert await first.run(long_command, Out) == Out(n=1)
    assert twin_statuses == [ClaimStatus.IN_PROGRESS] * 5


async def test_the_renewal_stops_with_the_command() -> None:
    clock = SteppedWallClock()
    store = InMemoryIdempotencyStore(lease_s=1.0, clock=clock)
    with pytest.raises(RuntimeError):
        await Idempotency(store, SCOPE, "fp", Response(), renew_every_s=0.001).run(_failing, Out)
    await asyncio.sleep(0.01)
    assert (await store.claim(SCOPE, "fp")).status is ClaimStatus.CLAIMED  # released
    assert not await store.renew(SCOPE, "other")
    assert len([t for t in asyncio.all_tasks() if "_keep_lease" in repr(t)]) == 0


async def _failing() -> Out:
    await asyncio.sleep(0.005)
    raise RuntimeError("boom")
