"""`factledger-lab memory ...`: commands about the memory backends (their benchmarks)."""

from __future__ import annotations

import asyncio
import platform
from enum import StrEnum
from typing import Annotated

import typer

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.api.log_setup import configure_logging
from factledger.application.memory.ports import Embedder
from factledger.application.memory.types import SearchMode
from factledger.bench.memory_recall import Latencies, RecallReport, run_recall_bench

memory_app = typer.Typer(help="Memory backend tools.", no_args_is_help=True)


class EmbedderChoice(StrEnum):
    ONNX = "onnx"
    HASHING = "hashing"


@memory_app.command("bench-recall")
def bench_recall(
    subjects: Annotated[int, typer.Option(min=1, help="Synthetic subjects to load.")] = 20,
    facts: Annotated[int, typer.Option(min=1, help="Facts per subject.")] = 100,
    queries: Annotated[int, typer.Option(min=10, help="Recall queries to time.")] = 500,
    embedder: Annotated[EmbedderChoice, typer.Option(help="Query/fact embedder.")] = (
        EmbedderChoice.ONNX
    ),
    mode: Annotated[SearchMode, typer.Option(help="Search mode.")] = SearchMode.MEMORIES,
    threads: Annotated[int, typer.Option(min=1, help="onnxruntime intra-op threads.")] = 1,
) -> None:
    """Time recall on the in-memory backend: p50/p95/p99 with and without query embedding."""
    configure_logging(
        json_lines=False, level="WARNING"
    )  # per-ingest info lines would bury the table
    chosen: Embedder = (
        OnnxEmbedder(threads=threads) if embedder is EmbedderChoice.ONNX else HashingEmbedder()
    )
    report = asyncio.run(
        run_recall_bench(
            chosen, subjects=subjects, facts_per_subject=facts, queries=queries, mode=mode
        )
    )
    typer.echo(render(report, chosen.model_id, mode))


def render(report: RecallReport, model_id: str, mode: SearchMode) -> str:
    def row(name: str, lat: Latencies) -> str:
        return (
            f"| {name} | {lat.p50_ms:.2f} | {lat.p95_ms:.2f} | {lat.p99_ms:.2f} "
            f"| {lat.mean_ms:.2f} |"
        )

    return "\n".join(
        [
            f"in-memory backend, embedder {model_id}, mode {mode.value}, "
            f"{report.subjects} subjects x {report.facts // report.subjects} facts, "
            f"{report.queries} queries, python {platform.python_version()}, "
            f"load {report.load_s:.1f} s",
            "",
            "| recall | p50 ms | p95 ms | p99 ms | mean ms |",
            "|---|---|---|---|---|",
            row("search with query embedding", report.with_embedding),
            row("search, query vector precomputed", report.without_embedding),
            row("query embedding alone", report.embedding_only),
        ]
    )


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")
