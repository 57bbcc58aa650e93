"""What recall's forget filter costs a turn once the subject has forgotten something.

Recall drops the hits the ledger's forgets cover (`recall.forget_filter.unforgotten`); since
ADR 0032 it also drops extension notes that repeat a forgotten value (`repeating_hits`), which reads
what those notes extend, then what that replaced. Timed over one turn's hits (memories mode,
10 hits, one of them such a note) on the in-memory and pgvector backends, for a subject that
forgot nothing, one that forgot an unrelated memory, and one that forgot the replaced value;
each time the whole filter and, separately, its check for notes repeating a forgotten value.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, SearchHit, SearchMode, SearchQuery
from factledger.application.recall.forget_filter import (
    NOTHING_FORGOTTEN,
    ForgetMask,
    repeating_hits,
    unforgotten,
)
from factledger.bench.backends import BenchEnvironment, open_backend
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock

START = datetime(2026, 2, 2, 9, tzinfo=UTC)
QUERY = "Halvorsen Tools Brightwater Supply missed deliveries parts"
SESSIONS = (
    (Message(Role.SUBJECT, "We buy our parts from Halvorsen Tools."),),
    (
        Message(Role.SUBJECT, "We switched to Brightwater Supply last month."),
        Message(Role.AGENT, "What made you switch?"),
        Message(Role.SUBJECT, "Mostly the missed deliveries."),
    ),
)


@dataclass(frozen=True, slots=True)
class Timing:
    backend: str
    case: str
    part: str
    calls: int
    p50_ms: float
    p95_ms: float


async def _timed(
    backend: str, case: str, part: str, calls: int, step: Callable[[], Awaitable[object]]
) -> Timing:
    for _ in range(min(20, calls)):
        await step()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await step()
        samples.append((time.perf_counter() - started) * 1e3)
    cuts = statistics.quantiles(samples, n=100)
    return Timing(backend, case, part, calls, round(cuts[49], 4), round(cuts[94], 4))


async def _subject(backend: MemoryBackend, ns: Namespace, extra: int) -> list[SearchHit]:
    said = [
        *SESSIONS,
        *((Message(Role.SUBJECT, f"We use tool {n} for parts."),) for n in range(extra)),
    ]
    for n, messages in enumerate(said):
        at = START + timedelta(days=n)
        await backend.ingest_transcript(ns, f"doc-{n}", messages, occurred_at=at)
    query = SearchQuery(QUERY, mode=SearchMode.MEMORIES, threshold=0.0, limit=10)
    return await backend.search(ns, query)


async def _cases(name: str, backend: MemoryBackend, calls: int, extra: int) -> list[Timing]:
    ns = Namespace(f"filter-{uuid.uuid4().hex[:8]}")
    hits = await _subject(backend, ns, extra)
    memories = await backend.list_memories(ns, include_superseded=True, limit=500)
    replaced = [m.id for m in memories if "Halvorsen" in m.text and not m.is_latest]
    unrelated = [m.id for m in memories if "tool 0 " in m.text]
    if not (replaced and unrelated and any("previously" in h.text for h in hits)):
        raise RuntimeError("the subject lacks the facts the cases need")
    cases = {
        "forgot nothing": NOTHING_FORGOTTEN,
        "forgot an unrelated memory": ForgetMask(memory_ids=frozenset(unrelated)),
        "forgot the replaced value": ForgetMask(memory_ids=frozenset(replaced)),
    }
    timings = []
    for case, mask in cases.items():
        kept = await unforgotten(hits, mask, backend, ns)
        if mask.memory_ids == frozenset(replaced) and any("Halvorsen" in h.text for h in kept):
            raise RuntimeError("the filter kept a note that repeats the forgotten value")

        def whole(mask: ForgetMask = mask) -> Awaitable[object]:
            return unforgotten(hits, mask, backend, ns)

        def repeats(mask: ForgetMask = mask) -> Awaitable[object]:
            return repeating_hits(hits, mask, backend, ns, provenance=True)

        timings.append(await _timed(name, case, "whole filter", calls, whole))
        if not mask.empty:  # with nothing forgotten the filter returns before the check
            timings.append(await _timed(name, case, "repeats check", calls, repeats))
    return timings


async def run(
    *, backends: Sequence[str] = ("in-memory", "pgvector"), calls: int = 500, extra: int = 30
) -> list[Timing]:
    embedder = CachingEmbedder(HashingEmbedder())
    timings: list[Timing] = []
    with tempfile.TemporaryDirectory(prefix="factledger-forget-filter-") as workdir:
        env = BenchEnvironment(
            embedder, RuleExtractor(), ManualClock(START), Path(workdir), uuid.uuid4().hex[:8], None
        )
        try:
            for name in backends:
                async with open_backend(name, env) as opened:
                    timings += await _cases(name, opened.backend, calls, extra)
        finally:
            await env.close()
    return timings


def render(timings: list[Timing]) -> str:
    lines = [
        "Recall's forget filter over one turn's 10 hits (ms per turn)",
        "",
        "| backend | case | part | calls | p50 | p95 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {t.backend} | {t.case} | {t.part} | {t.calls} | {t.p50_ms} | {t.p95_ms} |"
        for t in timings
    ]
    return "\n".join(lines)
