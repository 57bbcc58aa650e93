"""Latency and robustness through the port: recall percentiles, ingest-to-searchable, fail-open
rate under the recall budget, and throughput with concurrent agents.

The fail-open figure here comes from the bench's own deadline wrapper (`budgeted_search`),
which does what recall promises: a lookup still running at the budget is cancelled and the
agent gets an empty answer instead of an error or a wait.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from factledger.application.errors import MemoryBackendError
from factledger.application.memory_types import (
    IngestMode,
    Namespace,
    SearchHit,
    SearchMode,
    SearchQuery,
    namespace,
)
from factledger.application.ports import Clock, MemoryBackend
from factledger.bench.metrics import percentile
from factledger.bench.progress import Advance, no_progress
from factledger.domain.transcript import Message, Role

RECALL_BUDGET_S = 1.0
VISIBILITY_TIMEOUT_S = 30.0
POLL_INTERVAL_S = 0.005
TOPICS = ("supplier", "budget", "delivery", "invoice", "team", "plan", "office", "contract")
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
    record_visible_ms: list[float] = field(default_factory=list)
    transcript_visible_ms: list[float] = field(default_factory=list)
    not_visible: int = 0  # samples still invisible after VISIBILITY_TIMEOUT_S
    budgeted: int = 0
    timed_out: int = 0
    errors: int = 0
    throughput_rps: float = 0.0
    concurrent_ms: list[float] = field(default_factory=list)
    agents: int = 0

    @property
    def fail_open_rate(self) -> float:
        return (self.timed_out + self.errors) / self.budgeted if self.budgeted else 0.0

    def summary(self) -> dict[str, float | int]:
        def pct(samples: list[float], q: float) -> float:
            return round(percentile(samples, q), 2)

        return {
            "recall_p50_ms": pct(self.recall_ms, 50),
            "recall_p95_ms": pct(self.recall_ms, 95),
            "recall_p99_ms": pct(self.recall_ms, 99),
            "recall_samples": len(self.recall_ms),
            "record_visible_p50_ms": pct(self.record_visible_ms, 50),
            "record_visible_max_ms": pct(self.record_visible_ms, 100),
            "transcript_visible_p50_ms": pct(self.transcript_visible_ms, 50),
            "transcript_visible_max_ms": pct(self.transcript_visible_ms, 100),
            "not_visible": self.not_visible,
            "budget_s": RECALL_BUDGET_S,
            "budgeted_recalls": self.budgeted,
            "fail_open_rate": round(self.fail_open_rate, 4),
            "timed_out": self.timed_out,
            "errors": self.errors,
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


def _query(text: str, mode: SearchMode = SearchMode.CHUNKS) -> SearchQuery:
    return SearchQuery(text=text, mode=mode, threshold=0.0, limit=3)


async def budgeted_search(
    backend: MemoryBackend, ns: Namespace, query: SearchQuery, budget_s: float
) -> tuple[list[SearchHit], str | None]:
    """A search that never waits past the budget: `(hits, None)` or `([], reason)`."""
    try:
        return await asyncio.wait_for(backend.search(ns, query), timeout=budget_s), None
    except TimeoutError:
        return [], "timeout"
    except MemoryBackendError:
        return [], "backend_error"


async def _timed_search(backend: MemoryBackend, ns: Namespace, text: str) -> float:
    start = time.perf_counter()
    await backend.search(ns, _query(text))
    return (time.perf_counter() - start) * 1000


async def measure_recall(
    backend: MemoryBackend,
    ns: Namespace,
    queries: Sequence[str],
    scores: LatencyScores,
    advance: Advance,
) -> None:
    for text in queries:
        scores.recall_ms.append(await _timed_search(backend, ns, text))
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
    backend: MemoryBackend,
    ns: Namespace,
    queries: Sequence[str],
    sizes: LatencySizes,
    scores: LatencyScores,
    advance: Advance,
) -> None:
    """Recalls under the budget, `agents` in flight, as agents on a live call would make them."""
    gate = asyncio.Semaphore(sizes.agents)

    async def one(text: str) -> None:
        async with gate:
            _, reason = await budgeted_search(backend, ns, _query(text), RECALL_BUDGET_S)
        scores.budgeted += 1
        scores.timed_out += reason == "timeout"
        scores.errors += reason == "backend_error"
        advance(1)

    await asyncio.gather(*(one(text) for text in queries))


async def measure_throughput(
    backend: MemoryBackend,
    ns: Namespace,
    queries: Sequence[str],
    sizes: LatencySizes,
    scores: LatencyScores,
    advance: Advance,
) -> None:
    """`agents` concurrent agents each recalling `per_agent` times back to back."""

    async def agent(offset: int) -> None:
        for n in range(sizes.per_agent):
            text = queries[(offset * sizes.per_agent + n) % len(queries)]
            scores.concurrent_ms.append(await _timed_search(backend, ns, text))
            advance(1)

    start = time.perf_counter()
    await asyncio.gather(*(agent(offset) for offset in range(sizes.agents)))
    elapsed = time.perf_counter() - start
    scores.agents = sizes.agents
    scores.throughput_rps = sizes.agents * sizes.per_agent / elapsed if elapsed else 0.0


async def _ingest_corpus(
    backend: MemoryBackend, ns: Namespace, corpus: Sequence[str], width: int, advance: Advance
) -> None:
    gate = asyncio.Semaphore(width)

    async def put(n: int, text: str) -> None:
        async with gate:
            await backend.put_record(ns, f"note-{n}", "bench.note", json.dumps(text))
        advance(1)

    await asyncio.gather(*(put(n, text) for n, text in enumerate(corpus)))


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
    """Builds a corpus namespace, runs the four measurements, drops the namespace."""
    rng = random.Random(seed)
    ns = namespace(f"bench-{run_id}-latency")
    corpus = synthetic_sentences(sizes.corpus, rng)
    queries = [f"What did the customer say about the {rng.choice(TOPICS)}?" for _ in range(64)]
    scores = LatencyScores()
    try:
        await _ingest_corpus(backend, ns, corpus, sizes.agents, advance)
        await measure_recall(
            backend, ns, [queries[n % 64] for n in range(sizes.sequential)], scores, advance
        )
        await measure_visibility(
            backend, ns, sizes, scores, clock=clock, transcripts=transcripts, advance=advance
        )
        await measure_fail_open(
            backend, ns, [queries[n % 64] for n in range(sizes.budgeted)], sizes, scores, advance
        )
        await measure_throughput(backend, ns, queries, sizes, scores, advance)
    finally:
        await backend.drop_namespace(ns)
    return scores
