"""Opens the backends under test, each with the same embedder, extractor and clock.

- in-memory: `InMemoryMemoryBackend`.
- pgvector: `PgvectorMemoryBackend` in a fresh database of one embedded PostgreSQL server.
- supermemory-sim: the Supermemory adapter against the local Supermemory server under uvicorn
  on loopback; its latency profile is SIMULATED and applied only during the latency workload.
- supermemory-live: the real API, only when SUPERMEMORY_API_KEY is set.
- bm25-reference: the lexical reference (records only), to check the harness against the
  datasets' published floors.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import psycopg
import supermemory
from psycopg import sql

from factledger.adapters.embedding.onnx.calibration_tables import calibration_for
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.field_reader.head import load_topic_heads
from factledger.adapters.field_reader.topics import EmbeddingTopicReader
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.pgvector.backend import PgvectorConfig, PgvectorMemoryBackend
from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation
from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
from factledger.application.clocks import Clock
from factledger.application.memory.calibrated import CalibratedMemoryBackend
from factledger.application.memory.ports import Extractor, MemoryBackend
from factledger.application.memory.topics import AskedTopicMemoryBackend
from factledger.bench.bm25_reference import Bm25ReferenceBackend
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.testing.supermemory.faults import LatencyProfile, LatencySampler
from factledger.testing.supermemory.server import (
    DEFAULT_API_KEY,
    SupermemoryServer,
    serve_on_loopback,
)

CALIBRATED_BACKENDS = frozenset({"in-memory", "pgvector"})
BACKEND_NAMES = ("in-memory", "pgvector", "supermemory-sim", "supermemory-live", "bm25-reference")


class BackendUnavailableError(RuntimeError):
    """A requested backend cannot run here (no key, no adapter); the report says which."""


@dataclass(frozen=True, slots=True)
class BackendTraits:
    transcripts: bool  # has the extraction path (the lifecycle suite needs it)
    remote: bool  # every call crosses HTTP: the latency workload uses smaller samples
    simulated: bool  # figures come from a simulation, and the report says so


TRAITS = {
    "in-memory": BackendTraits(transcripts=True, remote=False, simulated=False),
    "pgvector": BackendTraits(transcripts=True, remote=False, simulated=False),
    "supermemory-sim": BackendTraits(transcripts=True, remote=True, simulated=True),
    "supermemory-live": BackendTraits(transcripts=True, remote=True, simulated=False),
    "bm25-reference": BackendTraits(transcripts=False, remote=False, simulated=False),
}


@dataclass(slots=True)
class OpenedBackend:
    """A backend ready for the workloads, with a switch for its simulated latency (if any)."""

    name: str
    backend: MemoryBackend
    traits: BackendTraits
    set_latency: Callable[[bool], None] = lambda _on: None
    detail: str = ""


@dataclass(slots=True)
class BenchEnvironment:
    """What every backend shares: one embedder, extractor and clock, one Postgres server."""

    embedder: CachingEmbedder
    extractor: Extractor
    clock: Clock
    work_dir: Path
    run_id: str
    sim_latency: LatencyProfile | None
    seed: int = 0
    postgres_location: PostgresLocation | None = None  # a running server; else one is started
    _postgres: EmbeddedPostgres | None = field(default=None)

    async def postgres(self) -> PostgresLocation:
        if self.postgres_location is not None:
            return self.postgres_location
        if self._postgres is None:
            data_dir = self.work_dir / "pgdata"
            self._postgres = await asyncio.to_thread(
                EmbeddedPostgres, data_dir, delete_on_stop=True
            )
        return self._postgres.location

    async def close(self) -> None:
        if self._postgres is not None:
            await asyncio.to_thread(self._postgres.stop)
            self._postgres = None


@asynccontextmanager
async def open_backend(name: str, env: BenchEnvironment) -> AsyncIterator[OpenedBackend]:
    """Opens one backend by its bench name and closes it (and drops its database) after."""
    if name not in TRAITS:
        raise BackendUnavailableError(f"unknown backend {name}")
    if name == "in-memory":
        backend = InMemoryMemoryBackend(
            extractor=env.extractor, embedder=env.embedder, clock=env.clock
        )
        yield OpenedBackend(name, backend, TRAITS[name])
        await backend.close()
    elif name == "pgvector":
        async with _pgvector(env) as opened:
            yield opened
    elif name == "bm25-reference":
        yield OpenedBackend(name, Bm25ReferenceBackend(), TRAITS[name])
    elif name == "supermemory-sim":
        async with _supermemory_sim(env) as opened:
            yield opened
    else:
        async with _supermemory_live(env) as opened:
            yield opened


@asynccontextmanager
async def _pgvector(env: BenchEnvironment) -> AsyncIterator[OpenedBackend]:
    admin = await env.postgres()
    database = f"bench_{env.run_id}".replace("-", "_")
    await _create_database(admin, database)
    admin_db = replace(admin, dbname=database)
    config = PgvectorConfig(
        app_conninfo=replace(admin_db, user="factledger_bench_app", password="").conninfo,
        admin_conninfo=admin_db.conninfo,
        app_role="factledger_bench_app",
        create_app_role=True,
        pool_max=8,
    )
    backend = await PgvectorMemoryBackend.open(
        config, embedder=env.embedder, extractor=env.extractor, clock=env.clock
    )
    try:
        yield OpenedBackend("pgvector", backend, TRAITS["pgvector"], detail=f"database {database}")
    finally:
        await backend.close()


async def _create_database(admin: PostgresLocation, database: str) -> None:
    async with await psycopg.AsyncConnection.connect(admin.conninfo, autocommit=True) as conn:
        with contextlib.suppress(psycopg.errors.DuplicateDatabase):
            await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))


@asynccontextmanager
async def _supermemory_sim(env: BenchEnvironment) -> AsyncIterator[OpenedBackend]:
    # The local server extracts with our extractor and embeds with our embedder: it simulates
    # Supermemory's API, latency and pipeline, not its models.
    server = SupermemoryServer(env.extractor, env.embedder, seed=env.seed)

    def set_latency(on: bool) -> None:
        server.latency = LatencySampler(env.sim_latency) if on and env.sim_latency else None

    with serve_on_loopback(server.app) as base_url:
        backend = SupermemoryMemoryBackend(
            api_key=DEFAULT_API_KEY, base_url=base_url, clock=env.clock
        )
        try:
            yield OpenedBackend(
                "supermemory-sim",
                backend,
                TRAITS["supermemory-sim"],
                set_latency,
                detail="local Supermemory v5 server on loopback",
            )
        finally:
            await backend.close()


@asynccontextmanager
async def _supermemory_live(env: BenchEnvironment) -> AsyncIterator[OpenedBackend]:
    api_key = os.environ.get("SUPERMEMORY_API_KEY", "")
    if not api_key:
        raise BackendUnavailableError("supermemory-live: SUPERMEMORY_API_KEY is not set")
    base_url = os.environ.get("SUPERMEMORY_BASE_URL") or _sdk_default_base_url(api_key)
    backend = SupermemoryMemoryBackend(api_key=api_key, base_url=base_url, clock=env.clock)
    try:
        yield OpenedBackend(
            "supermemory-live", backend, TRAITS["supermemory-live"], detail="live API"
        )
    finally:
        await backend.close()


def _sdk_default_base_url(api_key: str) -> str:
    """The SDK's own default endpoint, so this project never hard-codes it."""
    client = supermemory.Supermemory(api_key=api_key)
    try:
        return str(client.base_url)
    finally:
        client.close()


def as_served(opened: OpenedBackend, embedder: CachingEmbedder) -> tuple[MemoryBackend, str]:
    """The backend as the composition root serves it, and the scale of its scores: the
    self-hosted ones on the calibrated scale when their model has a packaged table (ADR 0023),
    anything else on its own ("raw")."""
    if opened.name not in CALIBRATED_BACKENDS:
        return opened.backend, "raw"
    # As the composition root: memories-mode searches carry the topic they ask about.
    backend = AskedTopicMemoryBackend(
        opened.backend, EmbeddingTopicReader(embedder, load_topic_heads())
    )
    if not isinstance(embedder.inner, OnnxEmbedder):
        return backend, "raw"
    calibration = calibration_for(embedder.inner.files)
    if calibration is None:
        return backend, "raw"
    return CalibratedMemoryBackend(backend, calibration), "calibrated"
