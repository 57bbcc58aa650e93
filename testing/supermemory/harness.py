"""Wiring for tests and the benchmark: our adapter on the official SDK against the local server.

    async with supermemory_backend_in_process(extractor, embedder) as (backend, server): ...

runs every request through `httpx.ASGITransport` (no sockets); `serve_on_loopback` in
`supermemory_server` runs the same app under uvicorn when real network timing matters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
from factledger.adapters.supermemory.calls import CallPolicy
from factledger.application.clocks import Clock
from factledger.application.memory.ports import Embedder, Extractor
from factledger.testing.supermemory.engine import ProcessingTiming
from factledger.testing.supermemory.faults import FaultPlan, LatencyProfile
from factledger.testing.supermemory.server import DEFAULT_API_KEY, SupermemoryServer

IN_PROCESS_BASE_URL = "http://supermemory.local"


@asynccontextmanager
async def supermemory_backend_in_process(
    extractor: Extractor,
    embedder: Embedder,
    *,
    clock: Clock | None = None,
    policy: CallPolicy | None = None,
    timing: ProcessingTiming | None = None,
    latency: LatencyProfile | None = None,
    faults: FaultPlan | None = None,
    ingest_timeout_s: float = 10.0,
) -> AsyncIterator[tuple[SupermemoryMemoryBackend, SupermemoryServer]]:
    """A fresh server and an adapter wired to it in-process; both closed on exit."""
    server = SupermemoryServer(extractor, embedder, timing=timing, latency=latency, faults=faults)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=server.app))
    backend = SupermemoryMemoryBackend(
        api_key=DEFAULT_API_KEY,
        base_url=IN_PROCESS_BASE_URL,
        http_client=http,
        policy=policy,
        clock=clock,
        ingest_timeout_s=ingest_timeout_s,
        expiry_cache_s=0.0 if clock is not None else 30.0,
    )
    try:
        yield backend, server
    finally:
        await backend.close()
        await http.aclose()
