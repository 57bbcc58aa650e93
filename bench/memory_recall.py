"""The recall-latency workload behind `factledger-lab memory bench-recall`.

Synthetic subjects (no personal data, no data set) are loaded into the in-memory backend
through its real ingest path; recall is then timed end to end through the port, once with
the query embedding and once with the query vector computed beforehand.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.types import Namespace, SearchMode, SearchQuery
from factledger.domain.transcript import Message, Role

ITEMS = ["packaging", "coffee beans", "flour", "printer paper", "cleaning supplies", "steel"]
VENDORS = ["Acme", "Northwind", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Tyrell"]
CITIES = ["Leeds", "Porto", "Lyon", "Graz", "Utrecht", "Cork", "Bergen", "Turku"]
FACTS = [
    "Buys {item} from {vendor}",
    "Monthly budget for {item} is {n} thousand",
    "Warehouse for {item} is in {city}",
    "Prefers email when {vendor} is late with {item}",
    "Has {n} employees at the {city} site",
    "Complained about {vendor} deliveries of {item}",
    "Plans to open a shop in {city} next year",
    "Pays {vendor} invoices within {n} days",
]
QUERIES = [
    "Who supplies their {item}?",
    "How much do they spend on {item}?",
    "Where do they store {item}?",
    "How many people work in {city}?",
    "Any problems with {vendor}?",
    "When do they pay their suppliers?",
]


@dataclass(frozen=True, slots=True)
class Latencies:
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float


@dataclass(frozen=True, slots=True)
class RecallReport:
    subjects: int
    facts: int
    queries: int
    load_s: float
    with_embedding: Latencies
    without_embedding: Latencies
    embedding_only: Latencies


class LineExtractor:
    """Every subject message is one stated fact: the workload times recall, not extraction."""

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return [
            ExtractedFact(key=f"f{i}", text=m.text, slot=None, source_indexes=(i,))
            for i, m in enumerate(request.transcript)
            if m.role is Role.SUBJECT
        ]


class PrecomputedEmbedder:
    """Answers queries it has seen from a table, so search can be timed without the model."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._table: dict[str, Vectors] = {}
        self.dimension = inner.dimension
        self.model_id = inner.model_id
        self.use_table = False

    async def remember(self, texts: Sequence[str]) -> None:
        vectors = await self._inner.embed(list(texts))
        self._table.update(zip(texts, vectors, strict=True))

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self.use_table and all(t in self._table for t in texts):
            return np.vstack([self._table[t] for t in texts])
        return await self._inner.embed(texts)


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        item=rng.choice(ITEMS),
        vendor=rng.choice(VENDORS),
        city=rng.choice(CITIES),
        n=rng.randint(2, 90),
    )


def percentiles(samples_s: Sequence[float]) -> Latencies:
    ms = np.array(samples_s) * 1e3
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    return Latencies(float(p50), float(p95), float(p99), float(statistics.fmean(ms)))


async def run_recall_bench(
    embedder: Embedder,
    *,
    subjects: int,
    facts_per_subject: int,
    queries: int,
    mode: SearchMode = SearchMode.MEMORIES,
    seed: int = 7,
) -> RecallReport:
    rng = random.Random(seed)
    cached = PrecomputedEmbedder(embedder)
    backend = InMemoryMemoryBackend(extractor=LineExtractor(), embedder=cached, clock=_Now())
    started = time.perf_counter()
    for s in range(subjects):
        transcript = [
            Message(Role.SUBJECT, _fill(rng.choice(FACTS), rng)) for _ in range(facts_per_subject)
        ]
        await backend.ingest_transcript(
            Namespace(f"bench-{s}"), "load", transcript, occurred_at=datetime.now(UTC)
        )
    load_s = time.perf_counter() - started
    asks = [
        (Namespace(f"bench-{rng.randrange(subjects)}"), _fill(rng.choice(QUERIES), rng))
        for _ in range(queries)
    ]
    await cached.remember(sorted({text for _, text in asks}))

    async def timed(use_table: bool) -> list[float]:
        cached.use_table = use_table
        samples = []
        for ns, text in asks:
            t0 = time.perf_counter()
            await backend.search(ns, SearchQuery(text, mode=mode, threshold=0.3, limit=3))
            samples.append(time.perf_counter() - t0)
        return samples

    await timed(True)  # warm-up: stack the per-namespace matrices once
    without = await timed(True)
    with_embedding = await timed(False)
    embed_only = []
    for _, text in asks:
        t0 = time.perf_counter()
        await embedder.embed([text])
        embed_only.append(time.perf_counter() - t0)
    await backend.close()
    return RecallReport(
        subjects=subjects,
        facts=subjects * facts_per_subject,
        queries=queries,
        load_s=load_s,
        with_embedding=percentiles(with_embedding),
        without_embedding=percentiles(without),
        embedding_only=percentiles(embed_only),
    )


class _Now:
    def now(self) -> datetime:
        return datetime.now(UTC)
