"""Measuring one workload on one backend for `factledger-lab pgvector bench`: timed searches,
embedding excluded and included, and recall against the exact ranking."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.lexical import (
    coverage,
    document_frequency,
    fused_score,
    idf_weights,
    query_terms,
)
from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.types import Namespace, SearchHit, SearchQuery
from factledger.bench.pgvector.data import Tier
from factledger.domain.transcript import Message, Role

TOP_K = 3
RECALL_TOLERANCE = 1e-4  # float32 in numpy vs float8 arithmetic in PostgreSQL


@dataclass(slots=True)
class Figures:
    """One line of the results table."""

    backend: str
    tier: str
    facts: int
    load_s: float = 0.0
    load_note: str = ""
    index_s: float | None = None
    excluded_ms: tuple[float, float, float] = (0.0, 0.0, 0.0)
    included_ms: tuple[float, float, float] = (0.0, 0.0, 0.0)
    recall: float = 0.0
    # The floor under a search with its embedding: the query embedding alone plus one round
    # trip (`SELECT 1`), timed per query in the same run (pgvector only).
    floor_ms: tuple[float, float, float] | None = None


@dataclass(slots=True)
class Workload:
    """The subjects of one tier, its queries and their exact answers."""

    tier: Tier
    facts: dict[Namespace, list[int]]
    queries: list[tuple[Namespace, str]]
    truth: list[list[float]]  # the exact top-k scores of each query (cosine and keywords)


class CachingEmbedder:
    """Serves known texts from a cache; `live` sends everything to the real embedder."""

    def __init__(self, real: Embedder, cache: dict[str, Vectors]) -> None:
        self.real, self.cache, self.live = real, cache, False
        self.dimension, self.model_id = real.dimension, real.model_id

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self.live:
            return await self.real.embed(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, await self.real.embed(missing), strict=True))
        return np.stack([self.cache[t] for t in texts]).astype(np.float32)


class ListExtractor:
    """Returns the facts registered for a transcript's text: one document per namespace."""

    def __init__(self) -> None:
        self.facts: dict[str, list[ExtractedFact]] = {}

    def register(self, key: str, texts: Sequence[str]) -> list[Message]:
        self.facts[key] = [
            # The one message is a lookup key, not the subject's words: no source sentence.
            ExtractedFact(key=f"f{i}", text=t, slot=None, source_indexes=())
            for i, t in enumerate(texts)
        ]
        return [Message(Role.SUBJECT, key)]

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return self.facts[request.transcript[0].text]


class Searches(Protocol):
    """What `measure` times: a backend, or one of the lab's searchers (`strategies`)."""

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]: ...


async def measure(
    backend: Searches,
    embedder: CachingEmbedder,
    work: Workload,
    line: Figures,
    echo: Callable[[str], None],
) -> Figures:
    for ns in {ns for ns, _ in work.queries}:  # warm caches and lazily built matrices
        await backend.search(ns, SearchQuery(work.queries[0][1], threshold=0.0, limit=TOP_K))
    found, excluded = await _timed(backend, work.queries)
    embedder.live = True
    try:
        _, included = await _timed(backend, work.queries)
    finally:
        embedder.live = False
    recalls = [_recall(f, t) for f, t in zip(found, work.truth, strict=True) if t]
    line.recall = float(np.mean(recalls)) if recalls else 1.0
    line.excluded_ms = percentiles(excluded)
    line.included_ms = percentiles(included)
    echo(
        f"{line.backend} {line.tier}: p95 {line.excluded_ms[1]:.2f} ms excl., "
        f"{line.included_ms[1]:.2f} ms incl., recall@{TOP_K} {line.recall:.3f}"
    )
    return line


async def _timed(
    backend: Searches, queries: list[tuple[Namespace, str]]
) -> tuple[list[list[float]], list[float]]:
    found, timings = [], []
    for ns, text in queries:
        t0 = time.perf_counter()
        hits = await backend.search(ns, SearchQuery(text, threshold=0.0, limit=TOP_K))
        timings.append((time.perf_counter() - t0) * 1e3)
        found.append([h.score for h in hits])
    return found, timings


def _recall(found: list[float], truth: list[float]) -> float:
    """Share of the exact top-k similarities found. Scores, not ids: equal sentences in a
    namespace tie, and any of them is a right answer."""
    left = list(found)
    matched = 0
    for wanted in truth:
        hit = next((f for f in left if abs(f - wanted) < RECALL_TOLERANCE), None)
        if hit is not None:
            left.remove(hit)
            matched += 1
    return matched / len(truth)


def percentiles(values: list[float]) -> tuple[float, float, float]:
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return float(p50), float(p95), float(p99)


def exact_top(
    vectors: Vectors, terms: Sequence[Counter[str]], query_vector: Vectors, query_text: str
) -> list[float]:
    """The top-k memories-mode scores of one namespace, computed exactly in numpy and Python:
    the cosine lifted by keyword coverage (`application.memory.lexical`)."""
    cosines = vectors @ query_vector
    wanted = query_terms(query_text)
    weights = idf_weights(wanted, document_frequency(wanted, terms), len(terms))
    scores = [
        fused_score(min(1.0, float(c)), coverage(wanted, weights, held))
        for c, held in zip(cosines, terms, strict=True)
    ]
    return [s for s in sorted(scores, reverse=True)[:TOP_K] if s >= 0.0]
