"""`factledger-lab recall bench`: recall latency p50/p95/p99 and the fail-open rate per backend."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import embedded_config, ensure_database
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.api.log_setup import configure_logging
from factledger.application.clocks import SystemClock
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.recall.policy import RecallPolicy
from factledger.bench.recall_latency import (
    BenchResult,
    RandomStaller,
    load,
    measure,
    render,
    subject_ids,
)
from factledger.bench.recall_served import render as render_served
from factledger.bench.recall_served import run as run_served
from factledger.bench.recall_turn_reads import render as render_turn_reads
from factledger.bench.recall_turn_reads import run as run_turn_reads
from factledger.testing.supermemory.faults import LatencyProfile, LatencySampler
from factledger.testing.supermemory.harness import supermemory_backend_in_process
from factledger.testing.supermemory.server import SupermemoryServer

recall_app = typer.Typer(help="Recall tools.", no_args_is_help=True)


class EmbedderChoice(StrEnum):
    ONNX = "onnx"
    HASHING = "hashing"


def build_embedder(choice: EmbedderChoice) -> Embedder:
    # No vector cache (ADR 0035): each timed recall embeds its question, as a new one would.
    return OnnxEmbedder(cached_vectors=0) if choice is EmbedderChoice.ONNX else HashingEmbedder()


class BenchBackend(StrEnum):
    IN_MEMORY = "in-memory"
    PGVECTOR = "pgvector"
    SUPERMEMORY = "supermemory"


@asynccontextmanager
async def _open(
    choice: BenchBackend, embedder: Embedder
) -> AsyncIterator[tuple[MemoryBackend, SupermemoryServer | None]]:
    clock, extractor = SystemClock(), RuleExtractor()
    if choice is BenchBackend.IN_MEMORY:
        yield InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=clock), None
    elif choice is BenchBackend.PGVECTOR:
        pg = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="recall-bench-")), delete_on_stop=True)
        try:
            await ensure_database(pg.location, "recall_bench")
            config = embedded_config(pg.location, dbname="recall_bench")
            pgvector = await PgvectorMemoryBackend.open(
                config, embedder=embedder, extractor=extractor, clock=clock
            )
            try:
                yield pgvector, None
            finally:
                await pgvector.close()
        finally:
            pg.stop()
    else:
        async with supermemory_backend_in_process(extractor, embedder) as (backend, server):
            yield backend, server


async def _bench_one(
    choice: BenchBackend,
    embedder: Embedder,
    *,
    subjects: int,
    calls: int,
    policy: RecallPolicy,
    stall_rate: float,
    latency: bool,
) -> BenchResult:
    async with AsyncExitStack() as stack:
        backend, server = await stack.enter_async_context(_open(choice, embedder))
        ids = subject_ids(subjects)
        await load(backend, ids)
        name = choice.value
        if server is not None and latency:
            # The observed shape of the hosted API (~0.5 s a call), switched on after loading;
            # its rare 38 s stalls come from --stall-rate, as for the other backends.
            server.latency = LatencySampler(LatencyProfile(typical_s=0.5, jitter_s=0.15))
            name = f"{name} (local server, ~0.5 s/call)"
        measured: MemoryBackend = (
            RandomStaller(backend, rate=stall_rate) if stall_rate > 0 else backend
        )
        return await measure(name, measured, ids, calls=calls, policy=policy)


@recall_app.command("bench")
def bench(
    backends: Annotated[list[BenchBackend] | None, typer.Option("--backend")] = None,
    subjects: Annotated[int, typer.Option(min=1)] = 20,
    calls: Annotated[int, typer.Option(min=10)] = 300,
    embedder: Annotated[EmbedderChoice, typer.Option()] = EmbedderChoice.ONNX,
    budget_s: Annotated[float, typer.Option(min=0.01)] = 1.0,
    stall_rate: Annotated[float, typer.Option(min=0.0, max=1.0)] = 0.0,
    supermemory_latency: Annotated[bool, typer.Option(help="Observed API latency.")] = True,
) -> None:
    """Time `recall` per backend; with --stall-rate, that share of searches hangs for 38 s."""
    chosen = backends or [BenchBackend.IN_MEMORY, BenchBackend.PGVECTOR]
    policy = RecallPolicy(recall_budget_s=budget_s)
    built = build_embedder(embedder)
    results = [
        asyncio.run(
            _bench_one(
                choice,
                built,
                subjects=subjects,
                calls=calls,
                policy=policy,
                stall_rate=stall_rate,
                latency=supermemory_latency,
            )
        )
        for choice in chosen
    ]
    typer.echo(render(results, budget_s=budget_s, stall_rate=stall_rate))
    typer.echo(f"embedder: {built.model_id}")


@recall_app.command("turn-reads")
def turn_reads(
    subjects: Annotated[int, typer.Option(min=1)] = 200,
    calls: Annotated[int, typer.Option(min=100)] = 3000,
    concurrency: Annotated[int, typer.Option(min=1)] = 1,
) -> None:
    """`Recall.recall` over its search with a SQLite ledger behind it: the ledger read as two
    ports beside the one read of a turn, in alternating blocks, with hand-offs and CPU."""
    # JSON lines at INFO as a served process writes them, to nowhere: their CPU is recall's.
    configure_logging(json_lines=True, level="INFO", stream=Path(os.devnull).open("w"))  # noqa: SIM115
    report = asyncio.run(run_turn_reads(subjects=subjects, calls=calls, concurrency=concurrency))
    typer.echo(render_turn_reads(report))


@recall_app.command("served")
def served(
    requests: Annotated[int, typer.Option(min=20)] = 500,
) -> None:
    """Recall over HTTP on a `factledger serve` process: the server's time outside
    `Recall.recall` (`Server-Timing` app - use) and the round trip beside `/healthz`."""
    typer.echo(render_served(run_served(requests=requests)))


def register(app: typer.Typer) -> None:
    app.add_typer(recall_app, name="recall")
