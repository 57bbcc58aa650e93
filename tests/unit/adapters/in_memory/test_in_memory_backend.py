"""In-memory backend behaviour beyond the shared contract: hybrid ranking, concurrency, logs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import structlog

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.ports import Embedder
from factledger.application.memory.rules import derive_memory_id
from factledger.application.memory.types import (
    HitKind,
    IngestMode,
    Namespace,
    ProcessingState,
    SearchMode,
    SearchQuery,
)
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor, stated

NS = Namespace("subject-unit")


@pytest.fixture
def extractor() -> ScriptedExtractor:
    return ScriptedExtractor()


async def make(extractor: ScriptedExtractor, embedder: Embedder) -> InMemoryMemoryBackend:
    return InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=ManualClock())


@pytest.fixture
async def backend(extractor: ScriptedExtractor) -> AsyncIterator[InMemoryMemoryBackend]:
    backend = await make(extractor, HashingEmbedder(256))
    yield backend
    await backend.close()


async def ingest(
    backend: InMemoryMemoryBackend, extractor: ScriptedExtractor, doc: str, *texts: str
) -> None:
    facts = [stated(f"f{i}", text) for i, text in enumerate(texts)]
    transcript = extractor.script(f"transcript of {doc}", *facts)
    await backend.ingest_transcript(NS, doc, transcript, occurred_at=ManualClock().now())


async def test_memory_ids_derive_from_namespace_document_and_fact_key(
    backend: InMemoryMemoryBackend, extractor: ScriptedExtractor
) -> None:
    await ingest(backend, extractor, "call-1", "Drinks tea")

    (memory,) = await backend.list_memories(NS)

    assert memory.id == derive_memory_id(NS, "call-1", "f0")
    assert derive_memory_id(Namespace("other"), "call-1", "f0") != memory.id


async def test_an_exact_code_passes_a_high_threshold_in_both_modes(
    backend: InMemoryMemoryBackend, extractor: ScriptedExtractor
) -> None:
    # The code's vector alone is far from the fact's; memories mode admits it through the
    # keyword it holds (ADR 0049: the lexical weight), hybrid through its text rank.
    await ingest(
        backend, extractor, "call-1", "Order ZX4471 arrived damaged", "Prefers morning calls"
    )

    memories = await backend.search(NS, SearchQuery("zx4471", threshold=0.9, limit=5))
    hybrid = await backend.search(
        NS, SearchQuery("zx4471", mode=SearchMode.HYBRID, threshold=0.9, limit=5)
    )

    assert [h.text for h in memories] == ["Order ZX4471 arrived damaged"]
    assert [h.text for h in hybrid] == ["Order ZX4471 arrived damaged"]
    assert 0.0 < hybrid[0].score <= 1.0


async def test_hybrid_ranks_what_both_signals_agree_on_first(
    backend: InMemoryMemoryBackend, extractor: ScriptedExtractor
) -> None:
    await ingest(backend, extractor, "call-1", "Supplier B delivers flour", "Flour prices rose")
    await backend.put_record(NS, "summary-1", "session_summary", '{"t": "call about weather"}')

    hits = await backend.search(
        NS, SearchQuery("supplier b flour", mode=SearchMode.HYBRID, threshold=0.1, limit=5)
    )

    assert hits[0].text == "Supplier B delivers flour"
    assert hits[0].score == pytest.approx(1.0)
    assert HitKind.CHUNK not in {h.kind for h in hits}


async def test_a_long_record_is_split_into_several_chunks(
    backend: InMemoryMemoryBackend,
) -> None:
    body = '{"notes": "' + " ".join(f"word{n}" for n in range(600)) + ' finale"}'
    await backend.put_record(NS, "long-1", "session_summary", body)

    hits = await backend.search(
        NS, SearchQuery("finale", mode=SearchMode.CHUNKS, threshold=0.0, limit=100)
    )

    assert len(hits) > 1
    assert {h.document_id for h in hits} == {"long-1"}
    assert (await backend.get_record(NS, "long-1")).body_json == body


async def test_concurrent_updates_leave_one_current_fact_per_slot(
    backend: InMemoryMemoryBackend, extractor: ScriptedExtractor
) -> None:
    clock = ManualClock()
    transcripts = [
        extractor.script(f"switch {n}", stated("f0", f"Supplier is {n}", slot="supplier"))
        for n in range(12)
    ]

    await asyncio.gather(
        *(
            backend.ingest_transcript(NS, f"call-{n}", t, occurred_at=clock.now())
            for n, t in enumerate(transcripts)
        )
    )
    memories = await backend.list_memories(NS)

    assert len(memories) == 12
    assert sum(m.is_latest for m in memories) == 1
    assert sorted(m.version for m in memories) == list(range(1, 13))


async def test_close_stops_the_batch_worker_and_a_new_batch_restarts_it(
    backend: InMemoryMemoryBackend, extractor: ScriptedExtractor
) -> None:
    first = extractor.script("batched one", stated("f0", "First fact"))
    await backend.ingest_transcript(
        NS, "b-1", first, occurred_at=ManualClock().now(), mode=IngestMode.BATCHED
    )
    await backend.close()
    second = extractor.script("batched two", stated("f0", "Second fact"))

    await backend.ingest_transcript(
        NS, "b-2", second, occurred_at=ManualClock().now(), mode=IngestMode.BATCHED
    )
    async with asyncio.timeout(10):
        while True:
            status = await backend.processing_status(NS, "b-2")
            if status.state is ProcessingState.DONE:
                break
            await asyncio.sleep(0.01)

    assert "Second fact" in {m.text for m in await backend.list_memories(NS)}


@pytest.fixture
def info_logs() -> Iterator[None]:
    """Lets info events through whatever level an earlier test configured."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    yield
    structlog.configure(**saved)


@pytest.mark.usefixtures("info_logs")
async def test_logs_carry_ids_and_counts_never_content(
    backend: InMemoryMemoryBackend, extractor: ScriptedExtractor
) -> None:
    secret = "my sister's diagnosis"
    with structlog.testing.capture_logs() as logs:
        await ingest(backend, extractor, "call-1", secret)
        await backend.put_record(NS, "r-1", "note", f'{{"t": "{secret}"}}')
        await backend.search(NS, SearchQuery(secret, threshold=0.0))
        (memory,) = await backend.list_memories(NS)
        await backend.forget(NS, [memory.id], reason=secret)

    assert logs
    assert secret not in repr(logs)
    assert "subject-unit" not in repr(logs)


async def test_the_onnx_embedder_finds_a_paraphrase(extractor: ScriptedExtractor) -> None:
    backend = await make(extractor, OnnxEmbedder())
    await ingest(
        backend,
        extractor,
        "call-1",
        "Switched the packaging supplier to Northwind",
        "Daughter starts school in September",
        "Warehouse budget is 40 thousand",
    )

    hits = await backend.search(NS, SearchQuery("who makes their boxes?", threshold=0.3, limit=1))

    assert [h.text for h in hits] == ["Switched the packaging supplier to Northwind"]
    await backend.close()
