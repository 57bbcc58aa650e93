"""`factledger-lab pgvector bench`: pgvector and the in-memory backend on the same synthetic
subjects.

- Facts are sentences embedded once by the real embedder; both backends get the same vectors
  (a caching embedder), so load and search figures compare engines, not embedding.
- Search latency is measured per query, sequentially, with the query vector cached
  ("excluded") and embedded live by the real embedder ("included"); recall@3 compares the
  similarities found with an exact numpy ranking of the namespace.
- pgvector loads through its COPY bulk path; a sample also goes through `ingest_transcript`
  so the port's own ingest throughput is reported. The large tier is measured with exact
  search, then again after `maintain_ann_indexes` built its partial HNSW indexes.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.onnx.calibration_tables import calibration_for
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.pgvector.ann import AnnSettings
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.bulk import BulkFact, bulk_load_facts
from factledger.adapters.pgvector.config import embedded_config, ensure_database
from factledger.adapters.pgvector.keyword_bound import BoundedSearchCounts
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.application.clocks import SystemClock
from factledger.application.memory.lexical import lexical_terms
from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.types import Namespace
from factledger.application.recall.policy import RecallPolicy
from factledger.bench.pgvector.data import Tier, assign, question, sentence_pool
from factledger.bench.pgvector.floor import floor
from factledger.bench.pgvector.lexical_depth import depth_agreements
from factledger.bench.pgvector.measure import (
    CachingEmbedder,
    Figures,
    ListExtractor,
    Workload,
    exact_top,
    measure,
    percentiles,
)
from factledger.bench.pgvector.strategies import DATABASE_ONLY, planned
from factledger.bench.pgvector.turns import BLOCK, Turns, take_turns

PORT_SAMPLE_FACTS = 10  # facts per document in the ingest_transcript sample
# The mirrors' budget here: the large tier whole (100,000 facts take ~300 MB by the estimate).
MIRROR_BUDGET_MB = 1024


@dataclass(frozen=True, slots=True)
class BenchOptions:
    small: Tier
    large: Tier
    queries: int
    pool: int
    ann_min_facts: int
    port_documents: int
    seed: int
    in_memory: bool = True
    vectors_cache: Path | None = None


@dataclass(slots=True)
class BenchReport:
    figures: list[Figures] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def run_bench(
    options: BenchOptions,
    real: Embedder,
    echo: Callable[[str], None],
    reference: Embedder | None = None,
) -> BenchReport:
    """`reference`, when given, is a second embedder whose query embedding is timed on the same
    queries, interleaved with the real one's, so the two costs compare under the same load."""
    report = BenchReport()
    report.notes.append(_load_note("start"))
    rnd = random.Random(options.seed)
    pool = sentence_pool(options.pool, options.seed)
    vectors = await _pool_vectors(pool, real, options, report)
    echo(report.notes[-1])
    embedder = CachingEmbedder(real, dict(zip(pool, vectors, strict=True)))
    workloads = [
        await _workload(tier, pool, vectors, embedder, options, rnd, report, reference)
        for tier in (options.small, options.large)
        if tier.namespaces and tier.facts
    ]
    report.figures += await _pgvector(options, pool, vectors, embedder, workloads, echo, report)
    if options.in_memory:
        report.figures += await _in_memory(pool, embedder, workloads, echo)
    report.notes.append(_load_note("end"))
    return report


def _load_note(when: str) -> str:
    # The machines this runs on are shared: the load says how far to trust the latencies.
    one, five, _ = os.getloadavg()
    cores = os.cpu_count()
    return f"load average at the {when}: {one:.1f} (1 min), {five:.1f} (5 min), {cores} cores"


async def _pool_vectors(
    pool: list[str], real: Embedder, options: BenchOptions, report: BenchReport
) -> Vectors:
    """Embeds the sentence pool, or loads it from `vectors_cache` when it was made by the same
    model for the same pool (the pool is deterministic per seed and size)."""
    cache = options.vectors_cache
    if cache is not None:
        cache = cache / f"pool-{real.model_id}-{options.seed}-{len(pool)}.npy"
        if cache.exists():
            report.notes.append(f"embedder {real.model_id}: pool vectors read from cache")
            loaded: Vectors = np.load(cache)
            return loaded
    started = time.perf_counter()
    vectors = await real.embed(pool)
    rate = len(pool) / (time.perf_counter() - started)
    report.notes.append(f"embedder {real.model_id}: {rate:.0f} sentences/s in batches")
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, vectors)
    return vectors


async def _workload(
    tier: Tier,
    pool: list[str],
    vectors: Vectors,
    embedder: CachingEmbedder,
    options: BenchOptions,
    rnd: random.Random,
    report: BenchReport,
    reference: Embedder | None,
) -> Workload:
    facts = {
        Namespace(f"{tier.name}-{i:04d}"): idx for i, idx in enumerate(assign(tier, len(pool), rnd))
    }
    names = list(facts)
    queries = []
    for _ in range(options.queries):
        ns = rnd.choice(names)
        queries.append((ns, question(pool[rnd.choice(facts[ns])], rnd)))
    timings: list[float] = []
    reference_timings: list[float] = []
    for _, text in queries:  # query vectors: embedded one by one, as a live search would
        t0 = time.perf_counter()
        embedder.cache[text] = (await embedder.real.embed([text]))[0]
        timings.append((time.perf_counter() - t0) * 1e3)
        if reference is not None:
            t0 = time.perf_counter()
            await reference.embed([text])
            reference_timings.append((time.perf_counter() - t0) * 1e3)
    report.notes.append(f"{tier.name}: query embedding {_percentile_text(timings)}")
    if reference is not None:
        report.notes.append(
            f"{tier.name}: query embedding by {reference.model_id} (same queries, interleaved) "
            f"{_percentile_text(reference_timings)}"
        )
    terms = [lexical_terms(text, "", None) for text in pool]
    truth = [
        exact_top(vectors[facts[ns]], [terms[i] for i in facts[ns]], embedder.cache[text], text)
        for ns, text in queries
    ]
    return Workload(tier, facts, queries, truth)


async def _pgvector(
    options: BenchOptions,
    pool: list[str],
    vectors: Vectors,
    embedder: CachingEmbedder,
    workloads: list[Workload],
    echo: Callable[[str], None],
    report: BenchReport,
) -> list[Figures]:
    figures = []
    server = EmbeddedPostgres(
        Path(tempfile.mkdtemp(prefix="factledger-pgbench-")), delete_on_stop=True
    )
    try:
        await ensure_database(server.location, "factledger_pgvector_bench")
        config = embedded_config(server.location, dbname="factledger_pgvector_bench", pool_max=2)
        extractor = ListExtractor()
        # The backend's searches read the database; the mirror's turns search through a
        # searcher of their own (`strategies.planned`) holding the large tier's mirrors.
        config = replace(config, search=replace(config.search, mirror=DATABASE_ONLY))
        backend = await PgvectorMemoryBackend.open(
            config, embedder=embedder, extractor=extractor, clock=SystemClock()
        )
        try:
            for work in workloads:
                t0 = time.perf_counter()
                rows = await bulk_load_facts(config, _bulk_rows(work, pool, vectors))
                line = Figures("pgvector", work.tier.name, rows, time.perf_counter() - t0, "COPY")
                figures.append(await measure(backend, embedder, work, line, echo))
                line.floor_ms = await floor(backend, embedder.real, work)
            report.notes.append(await _round_trip_note(backend, options.queries))
            echo(report.notes[-1])
            figures.append(await _port_ingest(backend, extractor, pool, options, echo))
            large = workloads[-1]
            t0 = time.perf_counter()
            built = await backend.maintain_ann_indexes(AnnSettings(min_facts=options.ann_min_facts))
            if built.created:
                facts = sum(len(idx) for idx in large.facts.values())
                ann = Figures("pgvector+HNSW", large.tier.name, facts)
                ann.index_s = time.perf_counter() - t0
                ann.load_note = f"{len(built.created)} partial indexes"
                before = replace(backend.searcher.bounded)
                figures.append(await measure(backend, embedder, large, ann, echo))
                # Its own floor, timed after it: the machine's load moves within a run.
                ann.floor_ms = await floor(backend, embedder.real, large)
                report.notes.append(_bounded_note(before, backend.searcher.bounded))
                echo(report.notes[-1])
                mirrored = planned(
                    backend, embedder, mirror=MirrorSettings(budget_mb=MIRROR_BUDGET_MB)
                )
                mirrored_line = await _mirrored(backend, mirrored, embedder, large, echo, report)
                if mirrored_line is not None:
                    figures.append(mirrored_line)
                agreements = await depth_agreements(backend, embedder, large, mirrored)
                report.notes.append(
                    "pgvector+HNSW deeper vector lists (ADR 0048) and the mirror (ADR 0056): "
                    + "; ".join(a.text() for a in agreements)
                )
                echo(report.notes[-1])
                embedder.live = True  # the turns include the query embedding, as the floor
                try:
                    turns = await take_turns(
                        backend,
                        embedder.real,
                        embedder,
                        large,
                        server.postmaster_pid(),
                        mirrored=mirrored,
                        recall_threshold=_recall_raw_threshold(embedder.real),
                    )
                finally:
                    embedder.live = False
                report.notes.append(_turns_note(turns))
                echo(report.notes[-1])
        finally:
            await backend.close()
    finally:
        server.stop()
    return figures


async def _mirrored(
    backend: PgvectorMemoryBackend,
    mirrored: PgvectorSearcher,
    embedder: CachingEmbedder,
    work: Workload,
    echo: Callable[[str], None],
    report: BenchReport,
) -> Figures | None:
    """The large tier's namespaces loaded into `mirrored`'s mirrors (ADR 0056), timed, and
    searched there."""
    mirrors = mirrored.mirrors
    started = time.perf_counter()
    for ns in work.facts:
        await mirrors.load(ns)
    seconds = time.perf_counter() - started
    held = mirrors.held()
    if not held:
        report.notes.append("mirror: no namespace of the large tier fits its settings")
        echo(report.notes[-1])
        return None
    megabytes = sum(mirrors.megabytes().values())
    report.notes.append(
        f"mirror: {len(held)} namespaces, {sum(held.values()):,} facts loaded in {seconds:.1f} s "
        f"({seconds / len(held) * 1e3:.0f} ms each), {megabytes:.0f} MB by its estimate"
    )
    echo(report.notes[-1])
    line = Figures("pgvector+mirror", work.tier.name, sum(held.values()))
    line.load_s, line.load_note = seconds, "mirror loads"
    await measure(mirrored, embedder, work, line, echo)
    line.floor_ms = await floor(backend, embedder.real, work)
    return line


def _recall_raw_threshold(embedder: Embedder) -> float | None:
    """The raw score recall's default threshold (calibrated relevance) maps to for this
    embedder's packaged table; None without one."""
    if not isinstance(embedder, OnnxEmbedder):
        return None
    calibration = calibration_for(embedder.files)
    return None if calibration is None else calibration.raw_at(RecallPolicy().threshold)


def _turns_note(turns: list[Turns]) -> str:
    floor_p95 = percentiles(turns[0].timings)[1]
    ratios = ", ".join(
        f"{t.name} {percentiles(t.timings)[1] / floor_p95:.2f}x" for t in turns[1:] if floor_p95
    )
    lines = "; ".join(t.line() for t in turns)
    return (
        f"pgvector+HNSW taking turns (blocks of {BLOCK}, embedding included): {lines}; "
        f"p95 / floor p95: {ratios}"
    )


def _bounded_note(before: BoundedSearchCounts, after: BoundedSearchCounts) -> str:
    searches = after.searches - before.searches
    second = after.second_statements - before.second_statements
    holders = after.holders - before.holders
    return (
        f"pgvector+HNSW keyword bound: {searches} searches, {second} fetched holders "
        "(in the one statement of ADR 0050: whose bound admitted holders) "
        f"({holders / max(second, 1):.1f} per fetch, {after.at_limit - before.at_limit} "
        "at the holder limit)"
    )


async def _round_trip_note(backend: PgvectorMemoryBackend, count: int) -> str:
    """The floor of any search: one `SELECT 1` on a pooled connection (a search is one round
    trip, ADR 0006 addendum), to tell the network and driver cost from the query's own."""
    timings = []
    for _ in range(count):
        t0 = time.perf_counter()
        await backend.db.one_statement(lambda conn: conn.execute("SELECT 1"))
        timings.append((time.perf_counter() - t0) * 1e3)
    return f"pgvector: one round trip (SELECT 1) {_percentile_text(timings)}"


def _percentile_text(timings: list[float]) -> str:
    p50, p95, p99 = percentiles(timings)
    return f"p50/p95/p99 {p50:.2f}/{p95:.2f}/{p99:.2f} ms"


def _bulk_rows(work: Workload, pool: list[str], vectors: Vectors) -> list[BulkFact]:
    return [
        BulkFact(
            ns, f"{ns}-{n}", pool[i], vectors[i], terms=tuple(lexical_terms(pool[i], "", None))
        )
        for ns, idx in work.facts.items()
        for n, i in enumerate(idx)
    ]


async def _port_ingest(
    backend: PgvectorMemoryBackend,
    extractor: ListExtractor,
    pool: list[str],
    options: BenchOptions,
    echo: Callable[[str], None],
) -> Figures:
    """Facts per second through `ingest_transcript` (extraction is a list lookup here)."""
    rnd = random.Random(options.seed + 1)
    clock = SystemClock()
    t0 = time.perf_counter()
    for n in range(options.port_documents):
        texts = rnd.sample(pool, PORT_SAMPLE_FACTS)
        transcript = extractor.register(f"port-doc-{n}", texts)
        ns = Namespace(f"port-{n % 50:02d}")
        await backend.ingest_transcript(ns, f"doc-{n}", transcript, occurred_at=clock.now())
    facts = options.port_documents * PORT_SAMPLE_FACTS
    line = Figures("pgvector", "ingest_transcript", facts, time.perf_counter() - t0, "port")
    echo(f"pgvector ingest_transcript: {facts / max(line.load_s, 1e-9):.0f} facts/s")
    return line


async def _in_memory(
    pool: list[str],
    embedder: CachingEmbedder,
    workloads: list[Workload],
    echo: Callable[[str], None],
) -> list[Figures]:
    extractor = ListExtractor()
    backend = InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=SystemClock())
    figures = []
    clock = SystemClock()
    try:
        for work in workloads:
            t0 = time.perf_counter()
            for ns, idx in work.facts.items():
                transcript = extractor.register(f"load-{ns}", [pool[i] for i in idx])
                await backend.ingest_transcript(ns, "load", transcript, occurred_at=clock.now())
            facts = sum(len(idx) for idx in work.facts.values())
            line = Figures("in-memory", work.tier.name, facts, time.perf_counter() - t0, "port")
            figures.append(await measure(backend, embedder, work, line, echo))
    finally:
        await backend.close()
    return figures
