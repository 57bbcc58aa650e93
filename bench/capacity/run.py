"""`factledger-lab capacity`: how far one PostgreSQL primary goes as the memory grows.

Subjects of `facts_per_subject` facts each are seeded in steps with the bulk path (binary COPY
as the owner, `adapters.pgvector.bulk`): synthetic texts and random unit vectors of the
product's dimension, so seeding costs the database's work, not a model's. After each step:

- disk: the database's size, and the facts table's (heap, TOAST and indexes), per million facts;
- memory: the server's resident set (proportional: shared pages counted once across the
  server's processes);
- recall: `search` on random subjects through the backend, reading the database (no
  process-local mirror, so every search is the primary's work), p50/p95/p99 against the
  recall budget;
- sessions/s: sessions of new subjects through `ingest_transcript` (the rule extractor and the
  hashing embedder), one after another: the write path as the tables grow.

The server is the embedded one in a folder of its own, deleted at the end.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
from psycopg import sql

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.bulk import BulkFact, bulk_load_facts
from factledger.adapters.pgvector.config import PgvectorConfig, embedded_config, ensure_database
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.application.clocks import SystemClock
from factledger.application.memory.ports import Vectors
from factledger.application.memory.types import IngestMode, Namespace, SearchQuery
from factledger.bench.pgvector.strategies import DATABASE_ONLY
from factledger.domain.transcript import Message, Role

DIMENSION = 384  # the product's default sentence model
DATABASE = "factledger_capacity"
RECALL_BUDGET_MS = 1000.0  # what `/recall` promises (it fails open past it)
_WORDS = (
    "supplier",
    "budget",
    "contract",
    "renewal",
    "invoice",
    "delivery",
    "warehouse",
    "pricing",
    "discount",
    "volume",
    "quarter",
    "march",
    "april",
    "june",
    "region",
    "north",
    "south",
    "manager",
    "finance",
    "procurement",
    "logistics",
    "software",
    "hardware",
    "licence",
    "support",
    "training",
    "upgrade",
    "migration",
    "cloud",
    "onsite",
    "premium",
    "standard",
    "basic",
    "monthly",
    "yearly",
    "euros",
    "dollars",
    "team",
    "office",
    "branch",
    "headquarters",
    "partner",
)
_SESSION_LINES = (
    "We moved to Supplier {n} in March.",
    "Our budget is {k} thousand euros for this year.",
    "The renewal is due in June and the contact is the finance team.",
)


@dataclass(frozen=True, slots=True)
class CapacityOptions:
    steps: tuple[int, ...]  # total facts after each step
    facts_per_subject: int = 100
    queries: int = 200
    sessions: int = 30
    chunk: int = 50_000  # facts per COPY transaction
    seed: int = 11
    workdir: Path | None = None
    # A loading fast path: the facts table's secondary indexes are dropped before each step's
    # load and rebuilt after it (sorted builds with `maintenance_work_mem_mb`), and the lab's
    # own server checkpoints rarely; the figures are then those of the same data, indexed.
    defer_indexes: bool = False
    maintenance_work_mem_mb: int = 1024


@dataclass
class StepFigures:
    facts: int
    subjects: int
    copy_facts_per_s: float
    database_mb: float
    facts_table_mb: float
    server_pss_mb: float
    recall_ms: tuple[float, float, float]  # p50, p95, p99
    sessions_per_s: float

    def within_budget(self) -> bool:
        return self.recall_ms[1] <= RECALL_BUDGET_MS

    def row(self) -> str:
        per_million = 1e6 / self.facts
        p50, p95, p99 = self.recall_ms
        return (
            f"| {self.facts:,} | {self.subjects:,} | {self.copy_facts_per_s:,.0f} "
            f"| {self.database_mb:,.0f} ({self.database_mb * per_million:,.0f}/M) "
            f"| {self.facts_table_mb:,.0f} ({self.facts_table_mb * per_million:,.0f}/M) "
            f"| {self.server_pss_mb:,.0f} "
            f"| {p50:.1f} / {p95:.1f} / {p99:.1f} | {self.sessions_per_s:.1f} |"
        )


HEADER = (
    "| facts | subjects | COPY facts/s | database MB (per M) | facts table MB (per M) "
    "| server PSS MB | recall ms p50 / p95 / p99 | sessions/s |\n"
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


@dataclass
class CapacityReport:
    steps: list[StepFigures] = field(default_factory=list)

    def table(self) -> str:
        return "\n".join([HEADER, *(s.row() for s in self.steps)])


class PlantedEmbedder:
    """The hashing embedder, except for query texts the benchmark planted a vector for (a
    stored fact's vector, nudged), so searches find what a subject said."""

    def __init__(self, dimension: int) -> None:
        self._hashing = HashingEmbedder(dimension)
        self.dimension = dimension
        self.model_id = self._hashing.model_id
        self.planted: dict[str, np.ndarray] = {}

    async def embed(self, texts: Sequence[str]) -> Vectors:
        out = await self._hashing.embed(texts)
        for i, text in enumerate(texts):
            if text in self.planted:
                out[i] = self.planted[text]
        return out


def unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSION), dtype=np.float32)
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def namespace_of(subject: int) -> Namespace:
    return Namespace(f"capacity-{subject:07d}")


def synthetic_facts(seed: int, first: int, last: int, per_subject: int) -> Iterator[BulkFact]:
    """Subjects `first` to `last`: texts of six words from a small vocabulary (their words are
    their keywords, which keeps the keyword index's size realistic without the product's
    keyword analysis, a Python cost the server never pays), random unit vectors."""
    stated = datetime(2026, 1, 1, tzinfo=UTC)
    rnd = random.Random(seed * 7_919 + first)
    vectors = unit_vectors(np.random.default_rng((seed, first)), (last - first) * per_subject)
    row = 0
    for subject in range(first, last):
        namespace = namespace_of(subject)
        for index in range(per_subject):
            words = rnd.sample(_WORDS, 6)
            yield BulkFact(
                namespace=namespace,
                memory_id=f"m-{subject}-{index}",
                text=f"Subject {subject} fact {index}: " + " ".join(words),
                vector=vectors[row],
                occurred_at=stated,
                terms=tuple(words),
            )
            row += 1


async def seed_subjects(
    config: PgvectorConfig, options: CapacityOptions, first: int, last: int
) -> None:
    per_chunk = max(1, options.chunk // options.facts_per_subject)
    for start in range(first, last, per_chunk):
        end = min(last, start + per_chunk)
        await bulk_load_facts(
            config, synthetic_facts(options.seed, start, end, options.facts_per_subject)
        )


_SECONDARY_INDEXES = """
SELECT i.indexname, i.indexdef FROM pg_indexes i
WHERE i.schemaname = %s AND i.tablename = 'memories'
  AND NOT EXISTS (
    SELECT 1 FROM pg_constraint c
    WHERE c.conindid = format('%%I.%%I', i.schemaname, i.indexname)::regclass)
ORDER BY i.indexname
"""


async def bulk_server_settings(admin: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
    """The lab's own server checkpoints rarely during a load (a 10 M fact load writes ~25 GB
    of WAL: with the default `max_wal_size` it would checkpoint, and write whole pages again,
    every gigabyte)."""
    await admin.execute("ALTER SYSTEM SET max_wal_size = '16GB'")
    await admin.execute("ALTER SYSTEM SET checkpoint_timeout = '30min'")
    await admin.execute("SELECT pg_reload_conf()")


@asynccontextmanager
async def indexes_deferred(
    admin: psycopg.AsyncConnection[tuple[object, ...]], schema: str, maintenance_mb: int
) -> AsyncIterator[None]:
    """Drops the facts table's indexes other than its constraints' for the block, and builds
    them again after it, exactly as they were (their definitions as the server states them)."""
    cur = await admin.execute(_SECONDARY_INDEXES, [schema])
    indexes = [(str(name), str(definition)) for name, definition in await cur.fetchall()]
    for name, _ in indexes:
        await admin.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(schema, name)))
    try:
        yield
    finally:
        await admin.execute(f"SET maintenance_work_mem = '{int(maintenance_mb)}MB'")
        for _, definition in indexes:
            await admin.execute(definition)  # the server's own text of an index it had
        await admin.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(schema, "memories")))


async def load_step(
    admin: psycopg.AsyncConnection[tuple[object, ...]],
    config: PgvectorConfig,
    options: CapacityOptions,
    first: int,
    last: int,
) -> None:
    """Subjects `first` to `last`, indexed when this returns."""
    if not options.defer_indexes:
        await seed_subjects(config, options, first, last)
        return
    async with indexes_deferred(admin, config.schema, options.maintenance_work_mem_mb):
        await seed_subjects(config, options, first, last)


async def stored_vector(
    admin: psycopg.AsyncConnection[tuple[object, ...]], subject: int, index: int
) -> np.ndarray:
    """A stored fact's vector (as the owner: no namespace binding needed)."""
    cur = await admin.execute(
        "SELECT embedding::real[] FROM memories WHERE namespace = %s AND id = %s",
        [namespace_of(subject), f"m-{subject}-{index}"],
    )
    row = await cur.fetchone()
    if row is None:
        raise RuntimeError("a seeded fact is missing: the benchmark is broken")
    return np.asarray(row[0], dtype=np.float32)


async def recall_timings(
    admin: psycopg.AsyncConnection[tuple[object, ...]],
    backend: PgvectorMemoryBackend,
    embedder: PlantedEmbedder,
    subjects: int,
    options: CapacityOptions,
    rnd: random.Random,
) -> tuple[float, float, float]:
    timings = []
    for q in range(options.queries):
        subject = rnd.randrange(subjects)
        index = rnd.randrange(options.facts_per_subject)
        target = await stored_vector(admin, subject, index)
        noise = np.random.default_rng((options.seed, q)).standard_normal(DIMENSION) * 0.02
        vector = (target + noise).astype(np.float32)
        text = f"capacity query {q}"
        embedder.planted = {text: vector / np.linalg.norm(vector)}
        started = time.perf_counter()
        hits = await backend.search(namespace_of(subject), SearchQuery(text))
        timings.append((time.perf_counter() - started) * 1000)
        if not hits:
            raise RuntimeError("a planted query found nothing: the benchmark is broken")
    p50, p95, p99 = np.percentile(timings, [50, 95, 99])
    return float(p50), float(p95), float(p99)


async def sessions_per_second(
    backend: PgvectorMemoryBackend, step: int, options: CapacityOptions
) -> float:
    started = time.perf_counter()
    for n in range(options.sessions):
        transcript = [
            Message(Role.SUBJECT, line.format(n=n, k=n % 90 + 10)) for line in _SESSION_LINES
        ]
        await backend.ingest_transcript(
            Namespace(f"capacity-session-{step}-{n:04d}"),
            "d-1",
            transcript,
            occurred_at=datetime.now(UTC),
            mode=IngestMode.INSTANT,
        )
    return options.sessions / (time.perf_counter() - started)


def server_pss_mb(postmaster: int | None) -> float:
    """The server's proportional resident memory (shared buffers counted once), from Linux's
    `/proc/<pid>/smaps_rollup` of the postmaster and its children."""
    if postmaster is None:
        return float("nan")
    pids = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            pids.append(int(stat.parent.name))
    kilobytes = 0
    for pid in pids:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                kilobytes += int(line.split()[1])
    return kilobytes / 1024


def sizes_mb(conninfo: str, schema: str) -> tuple[float, float]:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_database_size(current_database()), "
            "pg_total_relation_size(format('%%I.memories', %s::text)::regclass)",
            [schema],
        ).fetchone()
    if row is None:
        raise RuntimeError("the server reported no sizes")
    return row[0] / 2**20, row[1] / 2**20


async def run_capacity(options: CapacityOptions, echo: Callable[[str], None]) -> CapacityReport:
    report = CapacityReport()
    folder = Path(tempfile.mkdtemp(prefix="factledger-capacity-", dir=options.workdir))
    server = EmbeddedPostgres(folder / "pg", delete_on_stop=True)
    try:
        await ensure_database(server.location, DATABASE)
        config = embedded_config(server.location, dbname=DATABASE, pool_max=2)
        config = replace(config, search=replace(config.search, mirror=DATABASE_ONLY))
        embedder = PlantedEmbedder(DIMENSION)
        backend = await PgvectorMemoryBackend.open(
            config, embedder=embedder, extractor=RuleExtractor(), clock=SystemClock()
        )
        rnd = random.Random(options.seed)
        admin = await psycopg.AsyncConnection.connect(
            config.admin_conninfo, autocommit=True, options=f"-c search_path={config.schema}"
        )
        try:
            if options.defer_indexes:
                await bulk_server_settings(admin)
            subjects = 0
            for number, total in enumerate(options.steps):
                target = total // options.facts_per_subject
                started = time.perf_counter()
                await load_step(admin, config, options, subjects, target)
                copy_rate = (
                    (target - subjects)
                    * options.facts_per_subject
                    / (time.perf_counter() - started)
                )
                subjects = target
                database_mb, table_mb = sizes_mb(config.admin_conninfo, config.schema)
                figures = StepFigures(
                    facts=subjects * options.facts_per_subject,
                    subjects=subjects,
                    copy_facts_per_s=copy_rate,
                    database_mb=database_mb,
                    facts_table_mb=table_mb,
                    server_pss_mb=server_pss_mb(server.postmaster_pid()),
                    recall_ms=await recall_timings(
                        admin, backend, embedder, subjects, options, rnd
                    ),
                    sessions_per_s=await sessions_per_second(backend, number, options),
                )
                report.steps.append(figures)
                echo(figures.row())
        finally:
            await admin.close()
            await backend.close()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return report


def run(options: CapacityOptions, echo: Callable[[str], None]) -> CapacityReport:
    echo(HEADER)
    return asyncio.run(run_capacity(options, echo))
