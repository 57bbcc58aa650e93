"""`factledger-lab capacity`: subjects, facts, sessions/s, recall p95, disk and memory as one
PostgreSQL primary's memory grows (`bench.capacity.run`)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Annotated

import typer

from factledger.api.log_setup import configure_logging
from factledger.bench.capacity.run import RECALL_BUDGET_MS, CapacityOptions, run


def _steps(value: str) -> tuple[int, ...]:
    try:
        steps = tuple(int(part.replace("_", "")) for part in value.split(","))
    except ValueError:
        raise typer.BadParameter("comma-separated fact counts, e.g. 100000,1000000") from None
    if not steps or any(b <= a for a, b in itertools.pairwise(steps)) or steps[0] < 1:
        raise typer.BadParameter("fact counts must grow, from 1")
    return steps


def capacity(
    steps: Annotated[
        str, typer.Option(help="Total facts after each step, comma-separated.")
    ] = "100000,1000000,3000000,10000000",
    facts_per_subject: Annotated[int, typer.Option(min=1)] = 100,
    queries: Annotated[int, typer.Option(min=10, help="Searches timed per step.")] = 200,
    sessions: Annotated[int, typer.Option(min=1, help="Sessions ingested per step.")] = 30,
    chunk: Annotated[int, typer.Option(min=1000, help="Facts per COPY transaction.")] = 50_000,
    defer_indexes: Annotated[
        bool,
        typer.Option(
            help="Load fast: drop the facts table's secondary indexes before each step's load "
            "and rebuild them after it; the lab's server checkpoints rarely."
        ),
    ] = False,
    maintenance_work_mem_mb: Annotated[
        int, typer.Option(min=64, help="For the index rebuilds (with --defer-indexes).")
    ] = 1024,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the server's folder goes (deleted after).")
    ] = None,
) -> None:
    """Seed synthetic subjects in steps (binary COPY) into an embedded PostgreSQL and print,
    per step, disk and memory per million facts, recall p50/p95/p99 and sessions/s. Quick
    check: `--steps 20000,60000 --queries 50 --sessions 5`."""
    configure_logging(json_lines=False)
    options = CapacityOptions(
        steps=_steps(steps),
        facts_per_subject=facts_per_subject,
        queries=queries,
        sessions=sessions,
        chunk=chunk,
        workdir=workdir,
        defer_indexes=defer_indexes,
        maintenance_work_mem_mb=maintenance_work_mem_mb,
    )
    report = run(options, typer.echo)
    within = [s.facts for s in report.steps if s.within_budget()]
    typer.echo(
        f"recall p95 within the {RECALL_BUDGET_MS:.0f} ms budget up to {max(within):,} facts"
        if within
        else "recall p95 over budget at every step"
    )


def register(app: typer.Typer) -> None:
    app.command("capacity")(capacity)
