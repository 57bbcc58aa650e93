"""Search plans taking turns in one run (`factledger-lab pgvector bench`): the floor (query
embedding + `SELECT 1`), the mirror (ADR 0056), the database's search as served (one prepared
statement, ADR 0050), a narrower HNSW candidate list (`ef_search`), and deeper vector lists
for the keyword bound (`lexical_depth`, ADR 0048). Each plan is a searcher of its own
(`strategies.planned`).

The machine is shared and its load moves within a run, so they are timed in alternating
blocks of queries over the same workload. Each block also reads the CPU time the bench
process and the server's processes spent, which the load moves less than the wall clock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.application.memory.ports import Embedder
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.bench.pgvector.lexical_depth import LEXICAL_DEPTHS
from factledger.bench.pgvector.measure import TOP_K, Workload, percentiles
from factledger.bench.pgvector.strategies import planned

BLOCK = 50  # queries per turn
NARROW_EF_SEARCH = 40  # the HNSW candidate list tried against the default 100
_TICKS = os.sysconf("SC_CLK_TCK")
Call = Callable[[Namespace, str], Awaitable[None]]


@dataclass(slots=True)
class Turns:
    """Timings (ms, embedding included) and CPU seconds of one way of answering."""

    name: str
    timings: list[float] = field(default_factory=list)
    client_cpu_s: float = 0.0
    server_cpu_s: float = 0.0

    def line(self) -> str:
        p50, p95, p99 = percentiles(self.timings)
        count = max(len(self.timings), 1)
        return (
            f"{self.name}: p50/p95/p99 {p50:.2f}/{p95:.2f}/{p99:.2f} ms, CPU per call "
            f"{self.client_cpu_s / count * 1e3:.2f} ms bench + "
            f"{self.server_cpu_s / count * 1e3:.2f} ms server"
        )


def server_cpu_seconds(postmaster: int | None) -> float:
    """User + system CPU of a server's processes (the postmaster, its live children and those
    it has reaped; Linux /proc); 0.0 where that cannot be read. A backend that ends between two
    readings moves its time into the postmaster's reaped children's, so the sum never drops."""
    if postmaster is None:
        return 0.0
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        # After the command: state is field 0, so utime, stime, cutime, cstime are 11 to 14.
        if stat.parent.name == str(postmaster):
            total += sum(int(field) for field in fields[11:15])
        elif int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / _TICKS


async def take_turns(
    backend: PgvectorMemoryBackend,
    embedder: Embedder,
    searched_with: Embedder,
    work: Workload,
    postmaster: int | None,
    *,
    mirrored: PgvectorSearcher | None = None,
    recall_threshold: float | None = None,
) -> list[Turns]:
    """The floor and each plan's searches over `work.queries`, in alternating blocks, at
    threshold 0 (every fact may enter the top); `embedder` times the floor's embedding,
    `searched_with` embeds the searches' queries. With `mirrored`, a searcher holding the
    namespaces' mirrors, its searches too; given `recall_threshold` (the raw score recall's
    default threshold maps to), the database's search at it: what an agent's recall asks
    (ADR 0023)."""
    floor = Turns("floor")

    async def floor_call(_: Namespace, text: str) -> None:
        await embedder.embed([text])
        await backend.db.one_statement(lambda conn: conn.execute("SELECT 1"))

    def way(name: str, searcher: PgvectorSearcher, threshold: float = 0.0) -> tuple[Turns, Call]:
        async def call(ns: Namespace, text: str) -> None:
            await searcher.search(ns, SearchQuery(text, threshold=threshold, limit=TOP_K))

        return Turns(name), call

    ways: list[tuple[Turns, Call]] = [(floor, floor_call)]
    if mirrored is not None and mirrored.mirrors.held():
        ways.append(way("mirror", mirrored))
    ways.append(way("database", backend.searcher))
    narrow = planned(backend, searched_with, ef_search=NARROW_EF_SEARCH)
    ways.append(way(f"database, ef_search {NARROW_EF_SEARCH}", narrow))
    ways += [
        way(
            f"database, lexical depth {depth}", planned(backend, searched_with, lexical_depth=depth)
        )
        for depth in LEXICAL_DEPTHS
    ]
    if recall_threshold is not None:
        ways.append(
            way(
                f"database, recall's threshold (raw {recall_threshold:.3f})",
                backend.searcher,
                threshold=recall_threshold,
            )
        )
    for block_no, start in enumerate(range(0, len(work.queries), BLOCK)):
        block = work.queries[start : start + BLOCK]
        shift = block_no % len(ways)  # each way goes first, second and third in turn
        for turns, call in ways[shift:] + ways[:shift]:
            await _block(turns, call, block, postmaster)
    return [turns for turns, _ in ways]


async def _block(
    turns: Turns,
    call: Callable[[Namespace, str], Awaitable[None]],
    block: list[tuple[Namespace, str]],
    postmaster: int | None,
) -> None:
    client, server = time.process_time(), server_cpu_seconds(postmaster)
    for ns, text in block:
        t0 = time.perf_counter()
        await call(ns, text)
        turns.timings.append((time.perf_counter() - t0) * 1e3)
    turns.client_cpu_s += time.process_time() - client
    turns.server_cpu_s += server_cpu_seconds(postmaster) - server
