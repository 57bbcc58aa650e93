"""`factledger-lab pgvector mirror-costs`: what a namespace's mirror costs to load and saves at
each search, by the namespace's size (ADR 0225).

For each size: subjects of that many facts from the contact centre's sentence pool, loaded into
an embedded PostgreSQL; one backend that never mirrors and one that loads a namespace when it
is asked to. Each namespace's load is timed alone (wall and this process's CPU). Then its
searches are timed, each one read from the database and then from the mirror. The query vectors
are given, so no embedding is timed. The searches that pay for a load are its wall time over
what the mirror saves at each search (database p50 - mirror p50).
"""

from __future__ import annotations

import random
import tempfile
import time
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from pathlib import Path

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import embedded_config, ensure_database
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.application.memory.ports import Embedder
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import QueryVector, SearchQuery
from factledger.bench.pgvector.contact_centre import (
    ContactCentreOptions,
    Planned,
    load_facts,
    open_backend,
    plan,
    turn_query,
)
from factledger.bench.pgvector.data import question
from factledger.bench.pgvector.measure import percentiles

DATABASE = "mirror_costs"
NEVER = MirrorSettings(budget_mb=0)
# Loaded only when asked (`NamespaceMirrors.load`), within a budget no size here reaches.
ASKED = MirrorSettings(earn_after=1_000, facts_per_search=None, budget_mb=4_096)


@dataclass(frozen=True, slots=True)
class SizeCosts:
    facts: int
    namespaces: int
    load_wall_ms: float  # p50
    load_cpu_ms: float  # p50, this process
    database_ms: tuple[float, float]  # p50, p95
    mirror_ms: tuple[float, float]

    @property
    def searches_to_pay(self) -> float:
        saved = self.database_ms[0] - self.mirror_ms[0]
        return self.load_wall_ms / saved if saved > 0 else float("inf")

    def row(self) -> str:
        (d50, d95), (m50, m95) = self.database_ms, self.mirror_ms
        return (
            f"| {self.facts:,} | {self.namespaces} | {self.load_wall_ms:.1f} | "
            f"{self.load_cpu_ms:.1f} | {d50:.2f} / {d95:.2f} | {m50:.2f} / {m95:.2f} | "
            f"{self.searches_to_pay:.0f} | {MirrorSettings().searches_to_earn(self.facts)} |"
        )


HEADER = [
    "| facts | namespaces | load p50, wall ms | load p50, CPU ms | database search p50 / p95 ms "
    "| mirror search p50 / p95 ms | searches that pay for the load | searches that earn it "
    "(default) |",
    "| ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |",
]


async def measure_size(
    facts: int, namespaces: int, searches: int, real: Embedder, options: ContactCentreOptions
) -> SizeCosts:
    """One size's costs, on a server of its own."""
    planned = await plan(replace(options, subjects=namespaces, facts=facts), real)
    queries = await _queries(planned, searches, real)
    workdir = Path(tempfile.mkdtemp(prefix="factledger-mirror-costs-"))
    server = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
    try:
        await ensure_database(server.location, DATABASE)
        config = embedded_config(server.location, dbname=DATABASE, pool_max=2)
        database = await open_backend(config, real, NEVER)
        mirrored = await open_backend(config, real, ASKED)
        try:
            await load_facts(config, planned, namespace_for)
            return await _timed(facts, queries, database, mirrored)
        finally:
            await database.close()
            await mirrored.close()
    finally:
        server.stop()


async def _queries(
    planned: Planned, searches: int, real: Embedder
) -> list[tuple[uuid.UUID, list[SearchQuery]]]:
    """`searches` questions about each subject's own facts, their vectors given."""
    rnd = random.Random(len(planned.subjects))  # the same questions for a size in every run
    out = []
    for subject in planned.subjects:
        texts = [
            question(planned.pool[rnd.choice(planned.picked[subject])], rnd)
            for _ in range(searches)
        ]
        vectors = await real.embed(texts)
        out.append(
            (
                subject,
                [
                    replace(turn_query(text), vector=QueryVector(text, real, vector))
                    for text, vector in zip(texts, vectors, strict=True)
                ],
            )
        )
    return out


async def _timed(
    facts: int,
    queries: list[tuple[uuid.UUID, list[SearchQuery]]],
    database: PgvectorMemoryBackend,
    mirrored: PgvectorMemoryBackend,
) -> SizeCosts:
    # The first namespace warms both backends' connections and code paths, untimed.
    warm, *timed = queries
    await database.search(namespace_for(warm[0]), warm[1][0])
    await mirrored.searcher.mirrors.load(namespace_for(warm[0]))
    await mirrored.search(namespace_for(warm[0]), warm[1][0])
    walls, cpus = [], []
    for subject, _ in timed:
        cpu, wall = time.process_time(), time.perf_counter()
        await mirrored.searcher.mirrors.load(namespace_for(subject))
        walls.append((time.perf_counter() - wall) * 1e3)
        cpus.append((time.process_time() - cpu) * 1e3)
    from_database, from_mirror = [], []
    for subject, asked in timed:
        ns = namespace_for(subject)
        for query in asked:
            from_database.append(await _wall_ms(database.search(ns, query)))
            from_mirror.append(await _wall_ms(mirrored.search(ns, query)))
    d50, d95, _ = percentiles(from_database)
    m50, m95, _ = percentiles(from_mirror)
    return SizeCosts(
        facts,
        len(timed),
        percentiles(walls)[0],
        percentiles(cpus)[0],
        (d50, d95),
        (m50, m95),
    )


async def _wall_ms(call: Awaitable[object]) -> float:
    """How long `call` (not yet started: a coroutine runs only when awaited) takes."""
    started = time.perf_counter()
    await call
    return (time.perf_counter() - started) * 1e3
