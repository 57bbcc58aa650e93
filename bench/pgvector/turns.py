"""Prepared against planned-per-search statements, a narrower HNSW candidate list, and the
floor, taking turns in one run (`factledger pgvector bench`, ADR 0030 addendum).

The machine is shared and its load moves within a run, so they are timed in alternating
blocks of queries over the same workload: the floor (query embedding + `SELECT 1`), a search
whose statement is prepared once per connection (`prepared_search`), one planned by
`bound_search`'s `EXECUTE` on every call, a prepared one with `ef_search` 40, a prepared
one that fetches the keyword frequencies during the query's embedding instead of after it,
prepared ones that read a deeper vector list without keyword holders (`lexical_depth`, ADR
0048), and the two-statement form of a bounded search (vector list and frequencies, the bound
in Python, the holders by a second statement) beside "prepared", which ranks it in one
statement (`fused_in_sql`, ADR 0050).
Each block also reads the CPU time the bench process and the server's processes spent, which
the load moves less than the wall clock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.application.ports import Embedder
from factledger.bench.pgvector.lexical_depth import LEXICAL_DEPTHS
from factledger.bench.pgvector.measure import TOP_K, Workload, percentiles

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
    """User + system CPU of the server's processes (the postmaster's children, Linux /proc);
    0.0 where that cannot be read."""
    if postmaster is None:
        return 0.0
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        # After the command: state, ppid, ..., utime and stime are fields 14 and 15 of stat.
        if int(fields[1]) == postmaster or stat.parent.name == str(postmaster):
            total += int(fields[11]) + int(fields[12])
    return total / _TICKS


async def take_turns(
    backend: PgvectorMemoryBackend,
    embedder: Embedder,
    work: Workload,
    postmaster: int | None,
    recall_threshold: float | None = None,
) -> list[Turns]:
    """Floor, prepared, planned and narrow-list searches over `work.queries`, in alternating
    blocks; the others search at threshold 0 (every fact may enter the top), and, given
    `recall_threshold` (the raw score recall's default threshold maps to), a prepared search
    at it: what an agent's recall asks (ADR 0023)."""
    floor = Turns("floor")

    async def floor_call(_: Namespace, text: str) -> None:
        await embedder.embed([text])
        await backend.db.one_statement(lambda conn: conn.execute("SELECT 1"))

    async def search_call(ns: Namespace, text: str) -> None:
        await backend.searcher.search(ns, SearchQuery(text, threshold=0.0, limit=TOP_K))

    def way(name: str, **settings: object) -> tuple[Turns, Call]:
        return Turns(name), _switched(backend, search_call, **settings)

    ways: list[tuple[Turns, Call]] = [(floor, floor_call)]
    if backend.searcher.mirrors.held():
        # The default search (ADR 0056): the namespace's mirror, brought up to date by one
        # round trip while the query is embedded. The other ways read the database.
        ways.append(way("mirror", mirror_reads=True))
        ways.append(
            way(
                "mirror, brought up to date after the embedding",
                mirror_reads=True,
                mirror_overlap=False,
            )
        )
    ways += [
        way("prepared"),
        # Main's form before ADR 0050: the ranking in Python, the holders by a second statement.
        way("prepared, two statements", fused_in_sql=False),
        way("planned per search", prepared=False),
        way(f"prepared, ef_search {NARROW_EF_SEARCH}", ef_search=NARROW_EF_SEARCH),
        # The keyword frequencies fetched while the query is embedded, in a round trip of their
        # own, instead of in the first statement's pipeline after it (ADR 0045).
        way("prepared, overlap", overlap=True),
    ]
    ways += [_depth_way(backend, depth, search_call) for depth in LEXICAL_DEPTHS]
    if recall_threshold is not None:
        at_recall = Turns(f"prepared, recall's threshold (raw {recall_threshold:.3f})")

        async def at_recall_call(ns: Namespace, text: str) -> None:
            query = SearchQuery(text, threshold=recall_threshold, limit=TOP_K)
            await backend.searcher.search(ns, query)

        ways.append((at_recall, at_recall_call))
    for block_no, start in enumerate(range(0, len(work.queries), BLOCK)):
        block = work.queries[start : start + BLOCK]
        shift = block_no % len(ways)  # each way goes first, second and third in turn
        for turns, call in ways[shift:] + ways[:shift]:
            await _block(turns, call, block, postmaster)
    return [turns for turns, _ in ways]


def _switched(backend: PgvectorMemoryBackend, call: Call, **settings: object) -> Call:
    """`call` with the searcher's attributes set to `settings`, and set back after it."""
    searcher = backend.searcher

    async def switched(ns: Namespace, text: str) -> None:
        saved = {name: getattr(searcher, name) for name in settings}
        for name, value in settings.items():
            setattr(searcher, name, value)
        try:
            await call(ns, text)
        finally:
            for name, value in saved.items():
                setattr(searcher, name, value)

    return switched


def _depth_way(
    backend: PgvectorMemoryBackend,
    depth: int,
    search_call: Call,
    *,
    holders: bool = False,
) -> tuple[Turns, Call]:
    """A prepared search whose keyword candidates come from a vector list `depth` deep, no
    holders statement (`lexical_depth`, ADR 0048); `holders`: with the holders the bound
    still admits past it (exact)."""
    name = f"prepared, lexical depth {depth}" + (" + holders" if holders else "")
    call = _switched(backend, search_call, lexical_depth=depth, holders_past_depth=holders)
    return Turns(name), call


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
