"""`factledger pgvector ...`: upkeep of the pgvector memory backend."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from factledger.adapters.pgvector.ann import AnnReport, AnnSettings
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.api.bootstrap.compose import open_memory_backend
from factledger.api.settings import PgvectorBackendSettings, Settings, load_settings
from factledger.application.memory.forwarding import innermost_backend

pgvector_app = typer.Typer(help="The pgvector memory backend.", no_args_is_help=True)


@pgvector_app.command("maintain")
def maintain(
    min_facts: Annotated[
        int | None,
        typer.Option(min=1, help="Facts from which a subject gets its index (default: setting)."),
    ] = None,
) -> None:
    """Give every subject past the threshold its own partial HNSW index, drop those of
    subjects that shrank below half of it, and rewrite the tables so no byte of an erased row
    is left in their files (the configured pgvector backend, as its owner)."""
    settings = load_settings()
    if not isinstance(settings.backend, PgvectorBackendSettings):
        raise typer.BadParameter(
            "the configured backend is not pgvector (FACTLEDGER_BACKEND__KIND)"
        )
    threshold = min_facts or settings.backend.ann_min_facts
    report = asyncio.run(_maintain(settings, AnnSettings(min_facts=threshold)))
    if report.busy:
        typer.echo("another process is maintaining the indexes; nothing done")
        return
    for namespace, seconds in sorted(report.created.items()):
        typer.echo(f"created\t{namespace}\t{seconds:.1f} s")
    for namespace in sorted(report.dropped):
        typer.echo(f"dropped\t{namespace}")
    typer.echo(f"{len(report.created)} created, {len(report.dropped)} dropped")


async def _maintain(settings: Settings, ann: AnnSettings) -> AnnReport:
    async with open_memory_backend(settings) as opened:
        backend = innermost_backend(opened)
        assert isinstance(backend, PgvectorMemoryBackend)  # noqa: S101 - settings checked above
        report = await backend.maintain_ann_indexes(ann)
        # Asked for by an operator, the rewrite waits for every lock (0: no timeout) rather
        # than leaving a busy table as it was without a word.
        await backend.compact_erased(every_table=True, lock_timeout_ms=0)
        return report


def register(app: typer.Typer) -> None:
    app.add_typer(pgvector_app, name="pgvector")
