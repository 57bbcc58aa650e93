"""Latency and robustness through the port: recall percentiles, ingest-to-searchable, fail-open
rate under the recall budget, and throughput with concurrent agents.

Recall figures go through the product's `Recall` (per-turn recall, 1 s budget, memories
mode, threshold 0.55, limit 3) with no ledger behind it, so they time the memory lookup plus
recall's own work; a recall that comes back `degraded` (timeout or backend error) failed open.
Raw `search` percentiles (hybrid, limit 10) are reported beside them.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from uuid import NAMESPACE_URL, UUID, uuid5

from factledger.application.clocks import Clock
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import (
    IngestMode,
    Namespace,
    SearchMode,
    SearchQuery,
)
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.bench.ledgerless_sources import LedgerlessSources
from factledger.bench.metrics import percentile
from factledger.bench.progress import Advance, no_progress
from factledger.domain.transcript import Message, Role

VISIBILITY_TIMEOUT_S = 30.0
POLL_INTERVAL_S = 0.005
TOPICS = ("supplier", "budget", "delivery", "invoice", "team", "plan", "office", "contract")
FIRMS = ("Northwind Freight", "Harbor Logistics", "Alder Supply", "Crescent Parts")
QUESTIONS = (
    "What did the customer say about the {topic}?",
    "Which supplier do they work with for the {topic}?",
    "Is there anything open on the {topic}?",
)
VERBS = ("mentioned", "asked about", "complained about", "confirmed", "changed", "renewed")


@dataclass(frozen=True, slots=True)
class LatencySizes:
    """Sample sizes; the smoke run and slow remote backends use smaller ones."""

    corpus: int = 300  # records in the namespace searched
    sequential: int = 200  # recall latency samples, one at a time
    visibility: int = 10  # ingest-to-searchable samples per path
    budgeted: int = 200  # recalls under the budget, `agents` at a time
    agents: int = 8  # concurrent agents for throughput
    per_agent: int = 25  # recalls each agent makes


@dataclass(slots=True)
class LatencyScores:
    recall_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    record_visible_ms: list[float] = field(default_factory=list)
    transcript_visible_ms: list[float] = field(default_factory=list)
    not_visible: int = 0  # samples still invisible after VISIBILITY_TIMEOUT_S
    budgeted: int = 0
    failed_open: int = 0
    throughput_rps: float = 0.0
    concurrent_ms: list[float] = field(default_factory=list)
    agents: int = 0

    @property
    def fail_open_rate(self) -> float:
        return self.failed_open / self.budgeted if self.budgeted else 0.0

    def summary(self) -> dict[str, float | int]:
        def pct(samples: list[float], q: float) -> float:
            return round(percentile(samples, q), 2)

        return {
            "recall_p50_ms": pct(self.recall_ms, 50),
            "recall_p95_ms": pct(self.recall_ms, 95),
            "recall_p99_ms": pct(self.recall_ms, 99),
            "recall_samples": len(self.recall_ms),
            "search_p50_ms": pct(self.search_ms, 50),
            "search_p95_ms": pct(self.search_ms, 95),
            "search_p99_ms": pct(self.search_ms, 99),
            "record_visible_p50_ms": pct(self.record_visible_ms, 50),
            "record_visible_max_ms": pct(self.record_visible_ms, 100),
            "transcript_visible_p50_ms": pct(self.transcript_visible_ms, 50),
            "transcript_visible_max_ms": pct(self.transcript_visible_ms, 100),
            "not_visible": self.not_visible,
            "budget_s": RecallPolicy().recall_budget_s,
            "budgeted_recalls": self.budgeted,
            "fail_open_rate": round(self.fail_open_rate, 4),
            "failed_open": self.failed_open,
            "agents": self.agents,
            "throughput_rps": round(self.throughput_rps, 1),
            "concurrent_p95_ms": pct(self.concurrent_ms, 95),
        }


def synthetic_sentences(count: int, rng: random.Random) -> list[str]:
    """Short business notes with a numbered token each, so every record is distinct."""
    return [
        f"Customer {rng.choice(VERBS)} the {rng.choice(TOPICS)} on call {n}: "
        f"{rng.choice(TOPICS)} and {rng.choice(TOPICS)} need review."
        for n in range(count)
    ]


async def _timed_search(backend: MemoryBackend, ns: Namespace, text: str) -> float:
    start = time.perf_counter()
    await backend.search(ns, SearchQuery(text, SearchMode.HYBRID, 0.0, 10))
    return (time.perf_counter() - start) * 1000


async def _timed_recall(recall: Recall, subject: UUID, text: str) -> tuple[float, bool]:
    """(milliseconds, whether recall failed open)."""
    start = time.perf_counter()
    result = await recall.recall(subject, text)
    return (time.perf_counter() - start) * 1000, result.degraded is not None


async def measure_recall(
    backend: MemoryBackend,
    recall: Recall,
    subject: UUID,
    queries: Sequence[str],
    scores: LatencyScores,
    advance: Advance,
) -> None:
    ns = namespace_for(subject)
    for text in queries:
        scores.search_ms.append(await _timed_search(backend, ns, text))
        elapsed, _ = await _timed_recall(recall, subject, text)
        scores.recall_ms.append(elapsed)
        advance(1)


async def _wait_visible(
    backend: MemoryBackend, ns: Namespace, query: SearchQuery, token: str, start: float
) -> float | None:
    """Milliseconds from `start` until a hit mentions `token`; None past the timeout."""
    while time.perf_counter() - start < VISIBILITY_TIMEOUT_S:
        hits = await backend.search(ns, query)
        if any(token in hit.text for hit in hits):
            return (time.perf_counter() - start) * 1000
        await asyncio.sleep(POLL_INTERVAL_S)
    return None


async def measure_visibility(
    backend: MemoryBackend,
    ns: Namespace,
    sizes: LatencySizes,
    scores: LatencyScores,
    *,
    clock: Clock,
    transcripts: bool,
    advance: Advance,
) -> None:
    """Writes a new item and polls until search returns it, for records and transcripts."""
    for n in range(sizes.visibility):
        token = f"Zyqvar{n}"
        text = f"Customer confirmed the {token} contract renewal."
        start = time.perf_counter()
        await backend.put_record(ns, f"visible-{n}", "bench.note", json.dumps(text))
        elapsed = await _wait_visible(
            backend, ns, SearchQuery(text, SearchMode.CHUNKS, 0.0, 10), token, start
        )
        _add_visibility(scores.record_visible_ms, elapsed, scores)
        if transcripts:
            supplier = f"Qorvex{n} Freight"
            transcript = [Message(Role.SUBJECT, f"We switched to {supplier}.")]
            start = time.perf_counter()
            await backend.ingest_transcript(
                ns, f"visible-doc-{n}", transcript, occurred_at=clock.now(), mode=IngestMode.BATCHED
            )
            query = SearchQuery(f"switched to {supplier}", SearchMode.MEMORIES, 0.0, 10)
            elapsed = await _wait_visible(backend, ns, query, supplier, start)
            _add_visibility(scores.transcript_visible_ms, elapsed, scores)
        advance(1)


def _add_visibility(samples: list[float], elapsed: float | None, scores: LatencyScores) -> None:
    if elapsed is None:
        scores.not_visible += 1
    else:
        samples.append(elapsed)


async def measure_fail_open(
    recall: Recall,
    subject: UUID,
    queries: Sequence[str],
    sizes: LatencySizes,
    scores: LatencyScores,
    advance: Advance,
) -> None:
    """Recalls under the budget, `agents` in flight, as agents on live calls make them."""
    gate = asyncio.Semaphore(sizes.agents)

    async def one(text: str) -> None:
        async with gate:
            _, failed_open = await _timed_recall(recall, subject, text)
        scores.budgeted += 1
        scores.failed_open += failed_open
        advance(1)

    await asyncio.gather(*(one(text) for text in queries))


async def measure_throughput(
    recall: Recall,
    subject: UUID,
    queries: Sequence[str],
    sizes: LatencySizes,
    scores: LatencyScores,
    advance: Advance,
) -> None:
    """`agents` concurrent agents each recalling `per_agent` times back to back."""

    async def agent(offset: int) -> None:
        for n in range(sizes.per_agent):
            text = queries[(offset * sizes.per_agent + n) % len(queries)]
            elapsed, _ = await _timed_recall(recall, subject, text)
            scores.concurrent_ms.append(elapsed)
            advance(1)

    start = time.perf_counter()
    await asyncio.gather(*(agent(offset) for offset in range(sizes.agents)))
    elapsed = time.perf_counter() - start
    scores.agents = sizes.agents
    scores.throughput_rps = sizes.agents * sizes.per_agent / elapsed if elapsed else 0.0


async def _ingest_corpus(
    backend: MemoryBackend,
    ns: Namespace,
    sizes: LatencySizes,
    clock: Clock,
    *,
    transcripts: bool,
    rng: random.Random,
    advance: Advance,
) -> None:
    """Records of synthetic notes, and (where the backend extracts) transcripts whose subject
    states facts, about one per five records, so memories and chunks both exist."""
    gate = asyncio.Semaphore(sizes.agents)
    notes = synthetic_sentences(sizes.corpus, rng)

    async def put(n: int) -> None:
        async with gate:
            await backend.put_record(ns, f"note-{n}", "bench.note", json.dumps(notes[n]))
            if transcripts and n % 5 == 0:
                lines = [f"We work with {FIRMS[n % len(FIRMS)]} {n}.", notes[n]]
                messages = [Message(Role.SUBJECT, line) for line in lines]
                await backend.ingest_transcript(
                    ns, f"corpus-{n}", messages, occurred_at=clock.now()
                )
        advance(1)

    await asyncio.gather(*(put(n) for n in range(sizes.corpus)))


def latency_steps(sizes: LatencySizes) -> int:
    """How many progress steps `run_latency` advances."""
    return (
        sizes.corpus
        + sizes.sequential
        + sizes.visibility
        + sizes.budgeted
        + sizes.agents * sizes.per_agent
    )


async def run_latency(
    backend: MemoryBackend,
    run_id: str,
    sizes: LatencySizes,
    clock: Clock,
    *,
    transcripts: bool,
    seed: int,
    advance: Advance = no_progress,
) -> LatencyScores:
    """Builds one subject's corpus, runs the four measurements, drops the namespace."""
    rng = random.Random(seed)
    subject = uuid5(NAMESPACE_URL, f"factledger-bench/{run_id}/latency")
    ns = namespace_for(subject)
    recall = Recall(RecallPorts(backend, LedgerlessSources(), RecallPolicies()))
    queries = [rng.choice(QUESTIONS).format(topic=rng.choice(TOPICS)) for _ in range(64)]
    scores = LatencyScores()
    try:
        await _ingest_corpus(
            backend, ns, sizes, clock, transcripts=transcripts, rng=rng, advance=advance
        )
        sequential = [queries[n % 64] for n in range(sizes.sequential)]
        await measure_recall(backend, recall, subject, sequential, scores, advance)
        await measure_visibility(
            backend, ns, sizes, scores, clock=clock, transcripts=transcripts, advance=advance
        )
        budgeted = [queries[n % 64] for n in range(sizes.budgeted)]
        await measure_fail_open(recall, subject, budgeted, sizes, scores, advance)
        await measure_throughput(recall, subject, queries, sizes, scores, advance)
    finally:
        await backend.drop_namespace(ns)
    return scores
