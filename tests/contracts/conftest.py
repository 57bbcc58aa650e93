"""The memory port's contract suite runs over every backend registered in `BACKENDS`.

To add a backend: write an async context manager factory `(request, deps) -> MemoryBackend`
that builds it from `deps.extractor`, `deps.embedder` and `deps.clock` on fresh, empty state,
and append one `pytest.param(factory, id=..., marks=...)` to `BACKENDS`. The `backend` fixture
wraps it in `ValidatingMemoryBackend`, as the composition root does. `request` lets a
factory use other fixtures (`request.getfixturevalue("postgres")`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.forwarding import ForwardingMemoryBackend
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.memory.types import (
    IngestMode,
    Metadata,
    Namespace,
    ProcessingState,
    ProcessingStatus,
)
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor
from factledger.testing.supermemory.harness import supermemory_backend_in_process


@dataclass(frozen=True, slots=True)
class BackendDeps:
    extractor: ScriptedExtractor
    embedder: Embedder
    clock: ManualClock


BackendFactory = Callable[
    [pytest.FixtureRequest, BackendDeps], AbstractAsyncContextManager[MemoryBackend]
]


@asynccontextmanager
async def in_memory_backend(
    request: pytest.FixtureRequest, deps: BackendDeps
) -> AsyncIterator[MemoryBackend]:
    backend = InMemoryMemoryBackend(
        extractor=deps.extractor, embedder=deps.embedder, clock=deps.clock
    )
    try:
        yield backend
    finally:
        await backend.close()


@asynccontextmanager
async def supermemory_fake_http_backend(
    request: pytest.FixtureRequest, deps: BackendDeps
) -> AsyncIterator[MemoryBackend]:
    # The official SDK and our adapter, against the local v5 server over an ASGI transport.
    # What v5 does not report (slots, conditions, source indexes) it does not declare in
    # `capabilities`; the tests check those fields stay empty (see docs/ports.md).
    harness = supermemory_backend_in_process(deps.extractor, deps.embedder, clock=deps.clock)
    async with harness as (backend, _server):
        yield backend


def pgvector_factory(mirror: MirrorSettings | None) -> BackendFactory:
    """pgvector on one migrated schema of the session's embedded server, emptied before each
    test; with `mirror`, searches read a process-local mirror loaded by the first search of a
    namespace and brought up to date by each search after it (ADR 0056): the same promises."""

    @asynccontextmanager
    async def factory(
        request: pytest.FixtureRequest, deps: BackendDeps
    ) -> AsyncIterator[MemoryBackend]:
        async with pgvector_backend(
            request.getfixturevalue("postgres"),
            embedder=deps.embedder,
            extractor=deps.extractor,
            clock=deps.clock,
            shared=True,
            mirror=mirror,
        ) as backend:
            yield backend

    return factory


pgvector_memory_backend = pgvector_factory(None)
pgvector_mirrored_backend = pgvector_factory(MirrorSettings(inline=True, earn_after=1))


@asynccontextmanager
async def in_memory_behind_a_forwarder(
    request: pytest.FixtureRequest, deps: BackendDeps
) -> AsyncIterator[MemoryBackend]:
    # A wrapper that changes nothing must keep every promise of the adapter it wraps.
    async with in_memory_backend(request, deps) as backend:
        yield ForwardingMemoryBackend(backend)


SELF_HOSTED_BACKENDS = [
    pytest.param(in_memory_backend, id="in-memory"),
    pytest.param(in_memory_behind_a_forwarder, id="in-memory-forwarded"),
    pytest.param(pgvector_memory_backend, id="pgvector", marks=pytest.mark.integration),
    pytest.param(pgvector_mirrored_backend, id="pgvector-mirrored", marks=pytest.mark.integration),
]
BACKENDS = [
    *SELF_HOSTED_BACKENDS,
    pytest.param(supermemory_fake_http_backend, id="supermemory-fake-http"),
]


@pytest.fixture
def extractor() -> ScriptedExtractor:
    return ScriptedExtractor()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    # Lexical overlap is all the suite's scores rely on; tests pass explicit thresholds.
    return HashingEmbedder(dimension=512)


@asynccontextmanager
async def validated(
    request: pytest.FixtureRequest, deps: BackendDeps
) -> AsyncIterator[MemoryBackend]:
    factory: BackendFactory = request.param
    async with factory(request, deps) as backend:
        # As the composition root does: the wrapper checks inputs, the adapter does the rest.
        yield ValidatingMemoryBackend(backend)


@pytest.fixture(params=BACKENDS)
async def backend(
    request: pytest.FixtureRequest,
    extractor: ScriptedExtractor,
    embedder: Embedder,
    clock: ManualClock,
) -> AsyncIterator[MemoryBackend]:
    async with validated(request, BackendDeps(extractor, embedder, clock)) as backend:
        yield backend


@pytest.fixture(params=SELF_HOSTED_BACKENDS)
async def self_hosted_backend(
    request: pytest.FixtureRequest,
    extractor: ScriptedExtractor,
    embedder: Embedder,
    clock: ManualClock,
) -> AsyncIterator[MemoryBackend]:
    """The self-hosted backends only, for the contracts that are theirs alone (a module makes
    it its `backend`)."""
    async with validated(request, BackendDeps(extractor, embedder, clock)) as backend:
        yield backend


Ingest = Callable[..., Awaitable[ProcessingStatus]]
WaitDone = Callable[[Namespace, str], Awaitable[ProcessingStatus]]


@pytest.fixture
def ingest(backend: MemoryBackend, extractor: ScriptedExtractor, clock: ManualClock) -> Ingest:
    """Scripts `facts` for `text` and ingests it as a one-message transcript (instant mode)."""

    async def run(
        ns: Namespace,
        document_id: str,
        text: str,
        *facts: ExtractedFact,
        occurred_at: datetime | None = None,
        metadata: Metadata | None = None,
        mode: IngestMode = IngestMode.INSTANT,
    ) -> ProcessingStatus:
        transcript = extractor.script(text, *facts)
        return await backend.ingest_transcript(
            ns,
            document_id,
            transcript,
            occurred_at=occurred_at or clock.now(),
            metadata=metadata,
            mode=mode,
        )

    return run


@pytest.fixture
def wait_done(backend: MemoryBackend) -> WaitDone:
    """Polls `processing_status` until a document settles (done or failed), 10 s at most."""

    async def wait(ns: Namespace, document_id: str) -> ProcessingStatus:
        async with asyncio.timeout(10):
            while True:
                status = await backend.processing_status(ns, document_id)
                if status.state in (ProcessingState.DONE, ProcessingState.FAILED):
                    return status
                await asyncio.sleep(0.01)

    return wait
