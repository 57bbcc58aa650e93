"""The adapter against the local Supermemory server under uvicorn on loopback, with faults.

Real sockets and real timeouts: the 38 s stall must cost at most the adapter's time limit,
429s wait for Retry-After only when it fits, 5xx are retried, 402/403 are not.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
from factledger.adapters.supermemory.calls import CallPolicy
from factledger.application.errors import (
    MemoryConflictError,
    MemoryTimeoutError,
    MemoryUnavailableError,
)
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.testing.scripted_extractor import ScriptedExtractor
from factledger.testing.supermemory.faults import Fault, LatencyProfile, LatencySampler
from factledger.testing.supermemory.server import SupermemoryServer, serve_on_loopback

pytestmark = pytest.mark.serial

NS = Namespace("subject-1")
LIMIT_S = 1.0
POLICY = CallPolicy(timeout_s=LIMIT_S, attempt_timeout_s=0.6, max_attempts=3, backoff_s=0.05)
SEARCH = frozenset({"search"})


@pytest.fixture(scope="module")
def server() -> SupermemoryServer:
    return SupermemoryServer(ScriptedExtractor(), HashingEmbedder(128))


@pytest.fixture(scope="module")
def base_url(server: SupermemoryServer) -> Iterator[str]:
    with serve_on_loopback(server.app) as url:
        yield url


@pytest.fixture
async def backend(
    server: SupermemoryServer, base_url: str
) -> AsyncIterator[SupermemoryMemoryBackend]:
    server.faults.clear()
    server.latency = None
    server.requests.clear()
    backend = SupermemoryMemoryBackend(api_key=server.api_key, base_url=base_url, policy=POLICY)
    try:
        yield backend
    finally:
        await backend.close()


async def test_a_38_second_stall_costs_at_most_the_time_limit(
    server: SupermemoryServer, backend: SupermemoryMemoryBackend
) -> None:
    server.faults.push(Fault(stall_s=38.0, operations=SEARCH), times=5)

    started = time.monotonic()
    with pytest.raises(MemoryTimeoutError):
        await backend.search(NS, SearchQuery("anything"))
    elapsed = time.monotonic() - started

    assert elapsed < 2 * LIMIT_S  # generous bound: proves the limit, not a benchmark
    assert 1 <= server.requests.count("search") <= POLICY.max_attempts


async def test_the_observed_latency_profile_with_a_forced_stall_times_out(
    server: SupermemoryServer, backend: SupermemoryMemoryBackend
) -> None:
    server.latency = LatencySampler(
        LatencyProfile(stall_probability=1.0, operations=SEARCH, seed=7)
    )

    with pytest.raises(MemoryTimeoutError):
        await backend.search(NS, SearchQuery("anything"))


async def test_a_429_is_retried_after_retry_after_when_it_fits(
    server: SupermemoryServer, backend: SupermemoryMemoryBackend
) -> None:
    server.faults.push(Fault(status=429, retry_after_s=0.1, operations=SEARCH))

    hits = await backend.search(NS, SearchQuery("anything"))

    assert hits == []
    assert server.requests.count("search") == 2


async def test_a_429_whose_retry_after_exceeds_the_deadline_fails_at_once(
    server: SupermemoryServer, backend: SupermemoryMemoryBackend
) -> None:
    server.faults.push(Fault(status=429, retry_after_s=30, operations=SEARCH))

    started = time.monotonic()
    with pytest.raises(MemoryUnavailableError, match="429"):
        await backend.search(NS, SearchQuery("anything"))

    assert time.monotonic() - started < LIMIT_S
    assert server.requests.count("search") == 1


async def test_server_errors_are_retried_until_success(
    server: SupermemoryServer, backend: SupermemoryMemoryBackend
) -> None:
    server.faults.push(Fault(status=503, operations=SEARCH))
    server.faults.push(Fault(status=500, operations=SEARCH))

    assert await backend.search(NS, SearchQuery("anything")) == []
    assert server.requests.count("search") == 3


@pytest.mark.parametrize("status", [402, 403])
async def test_out_of_credits_and_forbidden_are_not_retried(
    server: SupermemoryServer, backend: SupermemoryMemoryBackend, status: int
) -> None:
    server.faults.push(Fault(status=status, operations=SEARCH))

    with pytest.raises(MemoryUnavailableError) as caught:
        await backend.search(NS, SearchQuery("anything"))

    assert server.requests.count("search") == 1
    assert str(status) in str(caught.value)
    assert "credits" not in str(caught.value).lower()  # the response body never leaks


async def test_a_409_is_a_conflict_and_not_retried(
    server: SupermemoryServer, backend: SupermemoryMemoryBackend
) -> None:
    server.faults.push(Fault(status=409, operations=frozenset({"documents.get"})))

    with pytest.raises(MemoryConflictError):
        await backend.get_record(NS, "r-1")

    assert server.requests.count("documents.get") == 1


async def test_an_unreachable_server_is_unavailable_within_the_limit() -> None:
    backend = SupermemoryMemoryBackend(
        api_key="k", base_url="http://127.0.0.1:9", policy=POLICY, http_client=httpx.AsyncClient()
    )
    started = time.monotonic()
    try:
        health = await backend.health()
        with pytest.raises((MemoryUnavailableError, MemoryTimeoutError)):
            await backend.search(NS, SearchQuery("anything"))
    finally:
        await backend.close()

    assert not health.ok
    assert time.monotonic() - started < 4 * LIMIT_S
