"""Contract: threshold, limit and ordering in every search mode."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    HitKind,
    Namespace,
    ProcessingStatus,
    SearchMode,
    SearchQuery,
)
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-search")
FACTS = [
    "Drinks coffee every morning",
    "Drinks coffee with oat milk",
    "Buys coffee beans from a local roaster",
    "Coffee machine broke last week",
    "Prefers tea in the evening",
    "Coffee budget is 50 per month",
    "Grinds coffee by hand",
    "Hates instant coffee",
]


async def load(backend: MemoryBackend, ingest: Ingest) -> None:
    facts = [stated(f"f{n}", text) for n, text in enumerate(FACTS)]
    await ingest(NS, "call-1", "A long talk about coffee", *facts)
    await backend.put_record(NS, "summary-1", "session_summary", '{"t": "coffee habits talk"}')


@pytest.mark.parametrize("mode", list(SearchMode))
async def test_limit_is_honoured_and_scores_never_rise(
    backend: MemoryBackend, ingest: Ingest, mode: SearchMode
) -> None:
    await load(backend, ingest)

    hits = await backend.search(NS, SearchQuery("coffee", mode=mode, threshold=0.0, limit=3))
    more = await backend.search(NS, SearchQuery("coffee", mode=mode, threshold=0.0, limit=20))

    expected = 1 if mode is SearchMode.CHUNKS else 3  # one record chunk, eight facts
    assert len(hits) == expected
    assert len(more) >= len(hits)
    for found in (hits, more):
        scores = [h.score for h in found]
        assert scores == sorted(scores, reverse=True)
        assert len({h.id for h in found}) == len(found)


@pytest.mark.parametrize("mode", [SearchMode.MEMORIES, SearchMode.CHUNKS])
async def test_every_hit_reaches_the_threshold(
    backend: MemoryBackend, ingest: Ingest, mode: SearchMode
) -> None:
    await load(backend, ingest)

    loose = await backend.search(NS, SearchQuery("coffee", mode=mode, threshold=0.0, limit=20))
    cut = sorted(h.score for h in loose)[len(loose) // 2]
    strict = await backend.search(NS, SearchQuery("coffee", mode=mode, threshold=cut, limit=20))

    assert loose
    assert all(h.score >= cut for h in strict)
    assert {h.id for h in strict} == {h.id for h in loose if h.score >= cut}


async def test_an_exact_match_ranks_first(backend: MemoryBackend, ingest: Ingest) -> None:
    await load(backend, ingest)

    hits = await backend.search(NS, SearchQuery("Grinds coffee by hand", threshold=0.3, limit=3))

    assert hits[0].text == "Grinds coffee by hand"
    assert hits[0].score > 0.9


async def test_a_threshold_of_one_keeps_only_near_identical_text(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await load(backend, ingest)

    hits = await backend.search(NS, SearchQuery("volcanic geology", threshold=0.9, limit=5))

    assert hits == []


async def test_hybrid_search_returns_memories_and_chunks(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await load(backend, ingest)

    hits = await backend.search(
        NS, SearchQuery("coffee habits", mode=SearchMode.HYBRID, threshold=0.0, limit=20)
    )

    assert {h.kind for h in hits} == {HitKind.MEMORY, HitKind.CHUNK}
    chunk = next(h for h in hits if h.kind is HitKind.CHUNK)
    assert chunk.document_id == "summary-1"


async def test_chunk_mode_returns_only_chunks(backend: MemoryBackend, ingest: Ingest) -> None:
    await load(backend, ingest)

    hits = await backend.search(
        NS, SearchQuery("coffee", mode=SearchMode.CHUNKS, threshold=0.0, limit=10)
    )

    assert [h.kind for h in hits] == [HitKind.CHUNK]
