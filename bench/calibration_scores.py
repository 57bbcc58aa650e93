"""The score a self-hosted backend gives each labelled pair: what calibration must map.

Calibration maps the score a backend serves, not the embedder's bare cosine: should memories
mode ever score facts otherwise (a lexical lift, a reranker), a refit follows it. Each question
gets a namespace of the in-memory backend (which scores exactly as pgvector does; the contract
suite checks it) holding exactly its labelled facts, ingested through the extraction path with
a scripted extractor, and is searched in memories mode with threshold 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.calibration import LabelledPair
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.memory.types import MAX_LIMIT, Namespace, SearchQuery, namespace
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def questions(
    pairs: Sequence[LabelledPair], *, limit: int | None = None
) -> list[list[LabelledPair]]:
    """The pairs of each question (its facts, labelled), at most `limit` questions."""
    grouped: dict[tuple[str, str], list[LabelledPair]] = {}
    for pair in pairs:
        grouped.setdefault((pair.group, pair.question), []).append(pair)
    return list(grouped.values())[:limit]


async def ingest_facts(
    backend: MemoryBackend,
    extractor: ScriptedExtractor,
    ns: Namespace,
    facts: Sequence[LabelledPair],
) -> None:
    """One subject message per fact; the extractor returns the facts as they are."""
    messages = [Message(Role.SUBJECT, p.fact) for p in facts]
    extractor.script_transcript(
        messages, *(ExtractedFact(f"f{i}", p.fact, None, (i,)) for i, p in enumerate(facts))
    )
    await backend.ingest_transcript(ns, "doc-1", messages, occurred_at=WHEN)


async def search_texts(
    backend: MemoryBackend, ns: Namespace, question: str, *, threshold: float, facts: int
) -> dict[str, float]:
    """The score of every fact the search returns, by text (all of them above `threshold`)."""
    query = SearchQuery(question, threshold=threshold, limit=min(MAX_LIMIT, facts))
    return {hit.text: hit.score for hit in await backend.search(ns, query)}


async def backend_scores(embedder: Embedder, pairs: Sequence[LabelledPair]) -> list[float]:
    """Each pair's memories-mode score, in the order of `pairs` (0 for a fact not returned:
    a negative cosine)."""
    extractor = ScriptedExtractor()
    backend = InMemoryMemoryBackend(
        extractor=extractor, embedder=CachingEmbedder(embedder), clock=ManualClock(WHEN)
    )
    scored: dict[tuple[str, str, str], float] = {}
    try:
        for n, facts in enumerate(questions(pairs)):
            ns = namespace(f"calibration-{n}")
            await ingest_facts(backend, extractor, ns, facts)
            found = await search_texts(
                backend, ns, facts[0].question, threshold=0.0, facts=len(facts)
            )
            for p in facts:
                scored[(p.group, p.question, p.fact)] = found.get(p.fact, 0.0)
    finally:
        await backend.close()
    return [scored[(p.group, p.question, p.fact)] for p in pairs]
