"""`factledger-lab bench`: the backend benchmark (see `factledger.bench` and ADR 0011); its
subcommand `load` lives in `bench.cli.load`."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    OnnxModelFiles,
    OnnxPreset,
)
from factledger.bench import main as bench_main
from factledger.bench.backends import BACKEND_NAMES
from factledger.bench.cli import calibration as cli_calibration
from factledger.bench.cli import load as cli_load
from factledger.bench.cli import review_queue as cli_review_queue
from factledger.bench.cli import write as cli_write
from factledger.bench.config import (
    DEFAULT_BACKENDS,
    DEFAULT_LOCOMO,
    DEFAULT_NATURAL,
    DEFAULT_PREFEVAL,
    SIM_PROFILES,
    WORKLOADS,
    BenchConfig,
    smoke_config,
)
from factledger.bench.importing import ORDERS, STORES, run_store
from factledger.bench.progress import Advance
from factledger.bench.record_search import run_record_search
from factledger.testing.history import HistoryShape

EXTRACTORS = ("rule", "learned", "learned-sentences", "learned-rules-and-sentences")


def _backends(value: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in BACKEND_NAMES]
    if unknown or not names:
        raise typer.BadParameter(f"choose from {', '.join(BACKEND_NAMES)}")
    return names


def _workloads(value: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names or any(name not in WORKLOADS for name in names):
        raise typer.BadParameter(f"choose from {', '.join(WORKLOADS)}")
    return names


def bench(
    ctx: typer.Context,
    backends: Annotated[
        str, typer.Option(help=f"Comma-separated: {', '.join(BACKEND_NAMES)}.")
    ] = ",".join(DEFAULT_BACKENDS),
    locomo: Annotated[Path, typer.Option(help="LoCoMo's locomo10.json (never copied).")] = (
        DEFAULT_LOCOMO
    ),
    prefeval: Annotated[Path, typer.Option(help="Folder of the PrefEval topic files.")] = (
        DEFAULT_PREFEVAL
    ),
    natural: Annotated[
        Path, typer.Option(help="The natural-question set (generated, in tests/data).")
    ] = DEFAULT_NATURAL,
    workloads: Annotated[
        str, typer.Option(help=f"Comma-separated subset of: {', '.join(WORKLOADS)}.")
    ] = ",".join(WORKLOADS),
    out: Annotated[Path, typer.Option(help="Report folder.")] = Path("bench-report"),
    sim_latency: Annotated[
        str, typer.Option(help=f"Simulated Supermemory latency: {', '.join(SIM_PROFILES)}.")
    ] = "observed",
    seed: Annotated[int, typer.Option(help="Seed of every generated workload.")] = 7,
    smoke: Annotated[bool, typer.Option(help="A tiny run of a few seconds (CI).")] = False,
    embedder_model: Annotated[
        OnnxPreset, typer.Option(help="The packaged sentence model every backend shares.")
    ] = DEFAULT_PRESET,
    extractor: Annotated[
        str,
        typer.Option(
            help="The memories' extractor: rule, learned (the product's default), "
            "learned-sentences (the learned parts alone, ADR 0125) or "
            "learned-rules-and-sentences (the sentences no rule fact stands on beside the "
            "rules' facts, ADR 0157)."
        ),
    ] = "rule",
) -> None:
    """Run the same workloads on each backend and write report.md, report.json and plots."""
    if ctx.invoked_subcommand is not None:
        return
    if sim_latency not in SIM_PROFILES:
        raise typer.BadParameter(f"choose from {', '.join(SIM_PROFILES)}")
    if extractor not in EXTRACTORS:
        raise typer.BadParameter(f"choose from {', '.join(EXTRACTORS)}", param_hint="--extractor")
    config = BenchConfig(
        backends=_backends(backends),
        locomo=locomo,
        prefeval=prefeval,
        natural=natural,
        workloads=_workloads(workloads),
        out_dir=out,
        seed=seed,
        sim_profile=sim_latency,
        extractor=extractor,
        # Every setting spelled out, so the report's command reproduces the run as it was.
        command=shlex.join(
            [
                "factledger-lab",
                "bench",
                "--backends",
                backends,
                "--locomo",
                str(locomo),
                "--prefeval",
                str(prefeval),
                "--natural",
                str(natural),
                "--workloads",
                workloads,
                "--out",
                str(out),
                "--sim-latency",
                sim_latency,
                "--seed",
                str(seed),
                "--embedder-model",
                embedder_model.value,
                "--extractor",
                extractor,
                *(["--smoke"] if smoke else []),
            ]
        ),
    )
    if smoke:
        config = smoke_config(config)
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:

        def start(description: str, total: int) -> Advance:
            task = progress.add_task(description, total=total)
            if not console.is_terminal:  # a log file gets one line per workload instead
                console.print(f"started: {description} ({total} steps)")
            return lambda steps: progress.advance(task, steps)

        embedder = OnnxEmbedder(OnnxModelFiles.preset(embedder_model))
        report = asyncio.run(bench_main.run(config, start, embedder=embedder))
    console.print(f"report: {out / 'report.md'} ({report['meta']['duration_s']} s)")


def bench_import(
    stores: Annotated[str, typer.Option(help="Comma-separated: sqlite, postgres.")] = ",".join(
        STORES
    ),
    subjects: Annotated[int, typer.Option(min=1, help="Subjects of the generated history.")] = 50,
    sessions_per_subject: Annotated[int, typer.Option(min=1)] = 20,
    messages_per_session: Annotated[int, typer.Option(min=1, max=2000)] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the generated history.")] = 7,
    follow_up: Annotated[
        bool, typer.Option(help="Also time the sync and the proposals step after it.")
    ] = True,
    order: Annotated[
        str,
        typer.Option(help="grouped: a subject's sessions in a row; interleaved: by start time."),
    ] = "grouped",
) -> None:
    """Import a generated history (default 10,000 messages) on each store and print
    messages/s and ledger events/s, with the load average."""
    names = tuple(n.strip() for n in stores.split(",") if n.strip())
    if not names or any(n not in STORES for n in names):
        raise typer.BadParameter(f"choose from {', '.join(STORES)}")
    if order not in ORDERS:
        raise typer.BadParameter(f"order: choose from {', '.join(ORDERS)}")
    shape = HistoryShape(subjects, sessions_per_subject, messages_per_session, seed)
    for name in names:
        figures = asyncio.run(run_store(name, shape, follow_up=follow_up, order=order))
        for line in figures.lines():
            typer.echo(line)


def bench_records(
    backends: Annotated[str, typer.Option(help="Comma-separated: in-memory, pgvector.")] = (
        "in-memory,pgvector"
    ),
    natural: Annotated[Path, typer.Option(help="The natural-question set.")] = DEFAULT_NATURAL,
) -> None:
    """Our records (proposals, profile versions) found by questions: each indexed by its body
    and by its search text side by side (ADR 0042); hit@1/3/10 in chunks and hybrid mode, and
    the embedding CPU per record either way."""
    names = _backends(backends)
    if any(n not in ("in-memory", "pgvector") for n in names):
        raise typer.BadParameter("choose from in-memory, pgvector")
    for line in asyncio.run(run_record_search(natural, names)):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    group = typer.Typer()
    group.callback(invoke_without_command=True)(bench)
    cli_load.register(group)
    group.command("import")(bench_import)
    group.command("records")(bench_records)
    group.command("calibration")(cli_calibration.bench_calibration)
    group.command("forget-mask")(cli_calibration.bench_forget_mask)
    group.command("forget-filter")(cli_calibration.bench_forget_filter)
    group.command("queue")(cli_review_queue.bench_queue)
    cli_write.register(group)
    app.add_typer(group, name="bench")
