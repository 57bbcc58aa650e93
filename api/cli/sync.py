"""`factledger worker` and `factledger dead-letters list|retry`: the sync to the backend."""

from __future__ import annotations

import asyncio
import signal
from contextlib import suppress
from typing import Annotated

import structlog
import typer

from factledger.adapters.pgvector.ann import AnnSettings
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.api.bootstrap.compose import open_runtime_patiently, open_sync_queue
from factledger.api.bootstrap.runtime import WORKER
from factledger.api.bootstrap.warmup import warm_up_now
from factledger.api.cli.periodic import run_every
from factledger.api.log_setup import configure_logging
from factledger.api.settings import (
    InMemoryBackendSettings,
    InMemorySyncStoreSettings,
    PgvectorBackendSettings,
    Settings,
    load_settings,
)
from factledger.application.memory.forwarding import innermost_backend
from factledger.application.memory.ports import MemoryBackend

log = structlog.get_logger(__name__)
dead_letters_app = typer.Typer(help="Sync items that failed 3 times.", no_args_is_help=True)


async def _run_worker(settings: Settings, *, once: bool) -> None:
    async with open_runtime_patiently(settings, WORKER) as runtime:
        if isinstance(settings.sync.store, InMemorySyncStoreSettings):
            # Each start replays the whole ledger (idempotent, but slow); share a
            # PostgreSQL queue between worker processes instead.
            log.warning("sync.volatile_queue", store="memory")
        if isinstance(settings.backend, InMemoryBackendSettings):
            log.warning("sync.process_local_backend", backend="in_memory")
        worker, backend = runtime.sync_worker, runtime.backend
        if worker is None or backend is None:
            raise RuntimeError("the worker runtime has no memory backend")
        # The models and lexicons its first items need, before it claims any (ADR 0094).
        await asyncio.to_thread(warm_up_now)
        if once:
            report = await worker.run_once()
            typer.echo(
                f"fed {report.fed}, done {report.done}, "
                f"retried {report.retried}, dead {report.dead}, skipped {report.skipped}"
            )
            return
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        rounds = [ann_maintenance(settings, backend, stop), compaction(settings, backend, stop)]
        await worker.run_forever(stop)
        for task in rounds:
            if task is not None:
                # An index build or rewrite cut short is rolled back; the next round redoes it.
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task


def ann_maintenance(
    settings: Settings, backend: MemoryBackend, stop: asyncio.Event
) -> asyncio.Task[None] | None:
    """On pgvector, the periodic check that gives large subjects their ANN index;
    several workers may run it, one at a time does the work (an advisory lock)."""
    s = settings.backend
    if not isinstance(s, PgvectorBackendSettings) or s.ann_maintenance_interval_s <= 0:
        return None
    pgvector = innermost_backend(backend)
    if not isinstance(pgvector, PgvectorMemoryBackend):
        return None
    ann = AnnSettings(min_facts=s.ann_min_facts)

    async def maintain() -> None:
        await pgvector.maintain_ann_indexes(ann)

    return asyncio.create_task(
        run_every(s.ann_maintenance_interval_s, maintain, stop, task="pgvector.ann_maintenance")
    )


def compaction(
    settings: Settings, backend: MemoryBackend, stop: asyncio.Event
) -> asyncio.Task[None] | None:
    """On pgvector, the periodic rewrite of the tables this worker erased from, so the erasures
     it applied leave no bytes in the tables' files for longer than about one interval
    ; a round with nothing erased does nothing."""
    s = settings.backend
    if not isinstance(s, PgvectorBackendSettings) or s.compaction_interval_s <= 0:
        return None
    pgvector = innermost_backend(backend)
    if not isinstance(pgvector, PgvectorMemoryBackend):
        return None

    async def compact() -> None:
        await pgvector.compact_erased()

    return asyncio.create_task(
        run_every(s.compaction_interval_s, compact, stop, task="pgvector.compaction")
    )


def worker(
    once: Annotated[bool, typer.Option(help="One pass, then exit.")] = False,
) -> None:
    """Follow the ledger and write to the configured memory backend until SIGINT/SIGTERM.

    Settings: `FACTLEDGER_BACKEND__KIND`, `FACTLEDGER_EMBEDDER__KIND`, the event store and
    `FACTLEDGER_SYNC__STORE__KIND=postgres` to share the queue between worker processes. On
    pgvector the worker also maintains the per-subject ANN indexes
    (`FACTLEDGER_BACKEND__ANN_MAINTENANCE_INTERVAL_S`, default hourly) and rewrites the tables
    it erased from (`FACTLEDGER_BACKEND__COMPACTION_INTERVAL_S`, default every 15 minutes).
    """
    settings = load_settings()
    configure_logging(json_lines=settings.log_json)
    asyncio.run(_run_worker(settings, once=once))


def _hint_if_process_local(settings: Settings) -> None:
    if isinstance(settings.sync.store, InMemorySyncStoreSettings):
        typer.echo(
            "note: the sync queue is in memory (FACTLEDGER_SYNC__STORE__KIND=memory), so it lives "
            "inside the API process; use the HTTP API there, or a PostgreSQL queue.",
            err=True,
        )


async def _list(settings: Settings, limit: int) -> None:
    _hint_if_process_local(settings)
    async with open_sync_queue(settings) as store:
        letters = await store.dead_letters(limit=limit)
        if not letters:
            typer.echo("no dead letters")
        for d in letters:
            targets = ",".join(d.targets)
            typer.echo(
                f"{d.item_id}\t{d.kind.value}\tsubject={d.subject_id}\tattempts={d.attempts}"
                f"\terror={d.error_type}\ttargets={targets}"
            )


async def _retry(settings: Settings, item_ids: list[str] | None) -> None:
    _hint_if_process_local(settings)
    async with open_sync_queue(settings) as store:
        count = await store.retry_dead(item_ids)
        typer.echo(f"{count} item(s) back in the queue")


@dead_letters_app.command("list")
def list_dead_letters(
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
) -> None:
    """List dead letters: item id, kind, subject, attempts, error type and target ids."""
    settings = load_settings()
    asyncio.run(_list(settings, limit))


@dead_letters_app.command("retry")
def retry_dead_letters(
    item_ids: Annotated[list[str] | None, typer.Argument(help="Item ids; none: all.")] = None,
) -> None:
    """Put dead letters back in the queue (all of them, or the given ids)."""
    settings = load_settings()
    asyncio.run(_retry(settings, item_ids or None))


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
    app.add_typer(dead_letters_app, name="dead-letters")
