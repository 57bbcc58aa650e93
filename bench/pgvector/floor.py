"""The floor under a pgvector recall: what no search can undercut, timed in the same run.

A search with its embedding costs at least the query embedding plus one round trip (ADR 0006
addendum: a search is one statement). Timing both per query, back to back, gives the floor
that `factledger-lab pgvector bench` sets the search against (issue 14: p95 at most 1.5x it).
"""

from __future__ import annotations

import time

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.application.memory.ports import Embedder
from factledger.bench.pgvector.measure import Workload, percentiles

FLOOR_RATIO_TARGET = 1.5


async def floor(
    backend: PgvectorMemoryBackend, embedder: Embedder, work: Workload
) -> tuple[float, float, float]:
    """p50/p95/p99 of the query embedding plus `SELECT 1` on a pooled connection."""
    timings = []
    for _, text in work.queries:
        t0 = time.perf_counter()
        await embedder.embed([text])
        await backend.db.one_statement(lambda conn: conn.execute("SELECT 1"))
        timings.append((time.perf_counter() - t0) * 1e3)
    return percentiles(timings)
