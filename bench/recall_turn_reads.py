"""What `Recall.recall` adds around its backend's search, with a real ledger behind it.

Three ways timed in alternating blocks of the same turns, in one run: the backend's search
alone (the wide query recall sends), recall reading the ledger as two ports (the confirmed
profile and the forget mask, each its own hand-off to a worker thread and its own aggregate
read), and recall reading both at once (`LedgerTurns`: one hand-off, one read). Besides
wall-clock percentiles, which wait for the CPU on a loaded machine, it counts what does not
depend on load: worker-thread hand-offs and aggregate reads per call, and the process's CPU
per call. `concurrency` turns run at once, as on a served process.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.application.clocks import SystemClock
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import LedgerRecallSources
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts, wide_query
from factledger.application.recall.turn_reads import LedgerTurns
from factledger.bench.recall_latency import QUERIES, load
from factledger.domain.transcript import Channel, Message, Role

POLICY = RecallPolicy(threshold=0.0)
TENANT = "bench"
Call = Callable[[uuid.UUID, str], Awaitable[object]]


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor (where `asyncio.to_thread` hands work), counting hand-offs."""

    def __init__(self) -> None:
        super().__init__(max_workers=min(32, (os.cpu_count() or 1) + 4))
        self.handoffs = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        self.handoffs += 1
        return super().submit(fn, *args, **kwargs)


@dataclass
class Way:
    name: str
    call: Call
    wall_ms: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    handoffs: int = 0
    reads: int = 0


@dataclass(frozen=True, slots=True)
class TurnReadsReport:
    subjects: int
    concurrency: int
    load_before: float
    load_after: float
    rows: list[tuple[str, float, float, float, float, float]]  # name, p50, p95, cpu, hops, reads
    gaps: list[tuple[str, float]]  # recall way, p50 over the search's p50


def _subjects(ledger: Ledger, count: int) -> list[uuid.UUID]:
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    ids = []
    for n in range(count):
        subject = ledger.register_subject(RegisterSubject(TENANT, "customer", f"cc-{n}"))
        for k in range(3):  # an aggregate of a few sessions, as a returning customer's
            at = start + timedelta(days=k)
            message = Message(Role.SUBJECT, f"Order number {n}-{k} is late.", at)
            ledger.record_session(
                RecordSession(TENANT, subject.subject_id, f"s{k}", Channel.CHAT, at, at, (message,))
            )
        ids.append(subject.subject_id)
    return ids


async def _block(way: Way, turns: Sequence[tuple[uuid.UUID, str]], concurrency: int) -> None:
    queue = list(turns)

    async def worker() -> None:
        while queue:
            subject, text = queue.pop()
            started = time.perf_counter()
            await way.call(subject, text)
            way.wall_ms.append((time.perf_counter() - started) * 1e3)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


async def run(*, subjects: int = 200, calls: int = 3000, concurrency: int = 1) -> TurnReadsReport:
    load_before = os.getloadavg()[0]
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    with tempfile.TemporaryDirectory(prefix="factledger-turn-reads-") as workdir:
        ledger = Ledger(
            sqlite_env(Path(workdir) / "ledger.sqlite"),
            clock=SystemClock(),
            keys=InMemoryKeyStore(),
        )
        try:
            ids = await asyncio.to_thread(_subjects, ledger, subjects)
            backend = InMemoryMemoryBackend(
                extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=SystemClock()
            )
            await load(backend, ids)
            reads = [0]
            get = ledger.repository.get

            def counted_get(*args: Any, **kwargs: Any) -> Any:
                reads[0] += 1
                return get(*args, **kwargs)

            ledger.repository.get = counted_get  # type: ignore[method-assign]
            sources, forgets = LedgerRecallSources(ledger), LedgerForgets(ledger)
            policies = RecallPolicies(default=POLICY)
            two = Recall(RecallPorts(backend, sources, policies, forgets=forgets))
            one = Recall(
                RecallPorts(
                    backend, sources, policies, forgets=forgets, turns=LedgerTurns(ledger, forgets)
                )
            )

            async def search(subject: uuid.UUID, text: str) -> object:
                return await backend.search(namespace_for(subject), wide_query(text, POLICY))

            ways = [
                Way("backend search alone", search),
                Way("recall, profile and mask read apart (two reads)", two.recall),
                Way("recall, one read of the subject (now)", one.recall),
            ]
            turns = [(ids[n % len(ids)], QUERIES[n % len(QUERIES)]) for n in range(calls)]
            block = 100
            for way in ways:  # warm: every aggregate cached, every mask computed
                await _block(way, turns[: len(ids)], concurrency)
                way.wall_ms.clear()
            for start in range(0, calls, block):
                chunk = turns[start : start + block]
                turn = start // block
                for way in ways[turn % 3 :] + ways[: turn % 3]:
                    hops, got, cpu = executor.handoffs, reads[0], time.process_time()
                    await _block(way, chunk, concurrency)
                    way.cpu_s += time.process_time() - cpu
                    way.handoffs += executor.handoffs - hops
                    way.reads += reads[0] - got
        finally:
            ledger.close()
    rows = [
        (
            w.name,
            round(statistics.median(w.wall_ms), 3),
            round(_p(w.wall_ms, 95), 3),
            round(w.cpu_s / len(w.wall_ms) * 1e3, 3),
            round(w.handoffs / len(w.wall_ms), 2),
            round(w.reads / len(w.wall_ms), 2),
        )
        for w in ways
    ]
    search_p50 = rows[0][1]
    gaps = [(name, round(p50 - search_p50, 3)) for name, p50, *_ in rows[1:]]
    return TurnReadsReport(subjects, concurrency, load_before, os.getloadavg()[0], rows, gaps)


def render(report: TurnReadsReport) -> str:
    lines = [
        f"Recall around its search: {report.subjects} subjects on a SQLite ledger, in-memory "
        f"backend, {report.concurrency} turn(s) at once; load {report.load_before:.1f} -> "
        f"{report.load_after:.1f}",
        "",
        "| way | p50 ms | p95 ms | CPU per call ms | thread hand-offs per call |"
        " aggregate reads per call |",
        "| --- | --- | --- | --- | --- | --- |",
        *(f"| {n} | {a} | {b} | {c} | {d} | {e} |" for n, a, b, c, d, e in report.rows),
        "",
        *(f"{name}: p50 over the search's p50 {gap} ms" for name, gap in report.gaps),
    ]
    return "\n".join(lines)
