"""The recall benchmark: latency percentiles and the fail-open rate of `Recall.recall`.

Per backend: load synthetic subjects (three sessions each) through the backend's extraction
path, then time `recall` calls under the product budget. An optional stall rate wraps the
backend so that a fraction of searches hang for 38 s (the incident): recall must answer those
at the budget, degraded.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for, transcript_document_id
from factledger.application.memory.types import Namespace, SearchHit, SearchQuery
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.stalling_backend import INCIDENT_STALL_S, Fault, StallingBackend

SUPPLIERS = ("Acme Parts", "Bolt Works", "Crane Supply", "Delta Metals", "Echo Tools")
CITIES = ("Berlin", "Lisbon", "Porto", "Madrid", "Vienna")
QUERIES = (
    "who do they work with as a supplier",
    "where are they based",
    "what is their budget",
    "works with supplier",
    "lives in which city",
)


class NoSources:
    """Recall's ledger side, empty: the benchmark times the memory path only."""

    async def confirmed_profile(self, subject_id: uuid.UUID) -> Sequence[ProfileEntry]:
        return []

    async def recent_sessions(
        self, subject_id: uuid.UUID, *, limit: int
    ) -> Sequence[SessionDigest]:
        return []

    async def open_proposals(self, subject_id: uuid.UUID, *, limit: int) -> Sequence[OpenProposal]:
        return []

    async def sessions(
        self, subject_id: uuid.UUID, session_ids: Sequence[str]
    ) -> Mapping[str, SessionDigest]:
        return {}

    async def transcript(self, subject_id: uuid.UUID, session_id: str) -> Sequence[Message]:
        return []


class RandomStaller(StallingBackend):
    """Stalls a seeded fraction of searches for 38 s; the rest pass straight through."""

    def __init__(self, inner: MemoryBackend, *, rate: float, seed: int = 7) -> None:
        super().__init__(inner, fault=Fault.STALL, faulty_calls=frozenset({"search"}))
        self._rate, self._rng = rate, random.Random(seed)

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        self.fault = Fault.STALL if self._rng.random() < self._rate else Fault.NONE
        return await super().search(namespace, query)


@dataclass(frozen=True, slots=True)
class BenchResult:
    backend: str
    calls: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    fail_open_rate: float
    reasons: Mapping[str, int]
    notes_per_call: float


def subject_ids(count: int) -> list[uuid.UUID]:
    return [uuid.uuid5(uuid.NAMESPACE_URL, f"factledger:bench:{n}") for n in range(count)]


async def load(backend: MemoryBackend, subjects: Sequence[uuid.UUID]) -> None:
    """Three sessions per subject through the extraction path (instant mode)."""
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    for n, subject in enumerate(subjects):
        lines = (
            f"We work with {SUPPLIERS[n % 5]} at the moment.",
            f"We live in {CITIES[n % 5]} now.",
            f"We now work with {SUPPLIERS[(n + 1) % 5]}.",
        )
        for k, line in enumerate(lines):
            session_id = f"bench-{n}-{k}"
            await backend.ingest_transcript(
                namespace_for(subject),
                transcript_document_id(subject, session_id),
                [Message(Role.AGENT, "How can I help?"), Message(Role.SUBJECT, line)],
                occurred_at=start + timedelta(days=30 * k),
                metadata={"session_id": session_id, "channel": Channel.CHAT.value},
            )


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def measure(
    name: str,
    backend: MemoryBackend,
    subjects: Sequence[uuid.UUID],
    *,
    calls: int,
    policy: RecallPolicy,
) -> BenchResult:
    """Times `calls` sequential recalls, cycling through subjects and queries."""
    recall = Recall(RecallPorts(backend, NoSources(), RecallPolicies(default=policy)))
    latencies: list[float] = []
    reasons: Counter[str] = Counter()
    notes = 0
    for n in range(calls):
        started = time.perf_counter()
        result = await recall.recall(subjects[n % len(subjects)], QUERIES[n % len(QUERIES)])
        latencies.append((time.perf_counter() - started) * 1e3)
        notes += len(result.notes)
        if result.degraded is not None:
            reasons[result.degraded.value] += 1
    return BenchResult(
        backend=name,
        calls=calls,
        p50_ms=statistics.median(latencies),
        p95_ms=_percentile(latencies, 0.95),
        p99_ms=_percentile(latencies, 0.99),
        max_ms=max(latencies),
        fail_open_rate=sum(reasons.values()) / calls,
        reasons=dict(reasons),
        notes_per_call=notes / calls,
    )


def render(results: Sequence[BenchResult], *, budget_s: float, stall_rate: float) -> str:
    header = (
        f"recall bench: budget {budget_s * 1e3:.0f} ms, injected {INCIDENT_STALL_S:.0f} s "
        f"stalls on {stall_rate:.1%} of searches\n"
        "| backend | calls | p50 ms | p95 ms | p99 ms | max ms | fail-open rate | reasons |"
        " notes/call |\n|---|---|---|---|---|---|---|---|---|"
    )
    rows = [
        f"| {r.backend} | {r.calls} | {r.p50_ms:.1f} | {r.p95_ms:.1f} | {r.p99_ms:.1f} "
        f"| {r.max_ms:.1f} | {r.fail_open_rate:.1%} "
        f"| {', '.join(f'{k}={v}' for k, v in sorted(r.reasons.items())) or '-'} "
        f"| {r.notes_per_call:.2f} |"
        for r in results
    ]
    return "\n".join([header, *rows])
