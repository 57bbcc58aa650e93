"""`factledger-lab pgvector bench`: the pgvector memory backend's benchmark."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Annotated

import typer

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    OnnxModelFiles,
    OnnxPreset,
)
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.api.log_setup import configure_logging
from factledger.application.memory.ports import Embedder
from factledger.bench.pgvector.bench import BenchOptions, BenchReport, run_bench
from factledger.bench.pgvector.contact_centre import ContactCentreOptions, load_line
from factledger.bench.pgvector.contact_centre_in_process import run_contact_centre
from factledger.bench.pgvector.contact_centre_served import run_served
from factledger.bench.pgvector.data import Tier
from factledger.bench.pgvector.measure import Figures
from factledger.bench.pgvector.mirror_costs import HEADER as MIRROR_COSTS_HEADER
from factledger.bench.pgvector.mirror_costs import measure_size

pgvector_app = typer.Typer(help="The pgvector memory backend's benchmark.", no_args_is_help=True)


def _tier(value: str, name: str) -> Tier:
    namespaces, _, facts = value.partition("x")
    if not (namespaces.isdigit() and facts.isdigit()):
        raise typer.BadParameter("write NAMESPACESxFACTS, e.g. 1000x100")
    return Tier(name, int(namespaces), int(facts))


@pgvector_app.command("bench")
def bench(
    small: Annotated[str, typer.Option(help="Small tier, NAMESPACESxFACTS.")] = "1000x100",
    large: Annotated[str, typer.Option(help="Large tier, NAMESPACESxFACTS.")] = "100x10000",
    queries: Annotated[int, typer.Option(min=10, help="Queries per tier.")] = 500,
    pool: Annotated[int, typer.Option(min=10, help="Distinct sentences to draw from.")] = 12_000,
    ann_min_facts: Annotated[
        int, typer.Option(min=1, help="Facts from which a namespace gets a partial HNSW index.")
    ] = 5_000,
    port_documents: Annotated[
        int, typer.Option(min=1, help="Documents (10 facts each) sent via ingest_transcript.")
    ] = 200,
    embedder: Annotated[str, typer.Option(help="onnx or hashing.")] = "onnx",
    embedder_model: Annotated[
        OnnxPreset, typer.Option(help="The packaged sentence model (with --embedder onnx).")
    ] = DEFAULT_PRESET,
    embedder_threads: Annotated[
        int, typer.Option(min=1, help="ONNX intra-op threads (the embedder's `threads` setting).")
    ] = 1,
    int8_activations: Annotated[
        bool, typer.Option(help="The ONNX embedder's `int8_activations` setting.")
    ] = True,
    compare_activations: Annotated[
        bool,
        typer.Option(help="Also time the query embedding with the other activations setting."),
    ] = True,
    in_memory: Annotated[bool, typer.Option(help="Also run the in-memory backend.")] = True,
    seed: Annotated[int, typer.Option()] = 7,
    vectors_cache: Annotated[
        Path | None, typer.Option(help="Folder keeping the pool's vectors between runs.")
    ] = None,
) -> None:
    """Load synthetic subjects into pgvector (embedded server) and the in-memory backend; print
    load throughput, index build time, search latency p50/p95/p99 and recall@3 side by side."""
    options = BenchOptions(
        small=_tier(small, "small"),
        large=_tier(large, "large"),
        queries=queries,
        pool=pool,
        ann_min_facts=ann_min_facts,
        port_documents=port_documents,
        seed=seed,
        in_memory=in_memory,
        vectors_cache=vectors_cache,
    )
    real: Embedder = HashingEmbedder(384)
    reference: Embedder | None = None
    if embedder == "onnx":
        files = OnnxModelFiles.preset(embedder_model)
        # No vector cache (ADR 0035): the floor is a query's embedding, which a repeated
        # query would otherwise read back from memory.
        real = OnnxEmbedder(
            files,
            threads=embedder_threads,
            int8_activations=int8_activations,
            cached_vectors=0,
        )
        if compare_activations:
            reference = OnnxEmbedder(
                files,
                threads=embedder_threads,
                int8_activations=not int8_activations,
                cached_vectors=0,
            )
    report = asyncio.run(run_bench(options, real, typer.echo, reference))
    typer.echo("")
    typer.echo(render(report))


DEFAULT_FACTS_PER_SEARCH = MirrorSettings().facts_per_search or 0


@pgvector_app.command("contact-centre")
def contact_centre(
    subjects: Annotated[int, typer.Option(min=10, help="Subjects (one namespace each).")] = 1_000,
    facts: Annotated[int, typer.Option(min=10, help="Facts per subject.")] = 100,
    queries: Annotated[
        int, typer.Option(min=10, help="Searches in all (conversation turns).")
    ] = 600,
    earn_after: Annotated[
        list[int] | None,
        typer.Option(min=1, help="Mirror earned at this search of a namespace (repeatable)."),
    ] = None,
    embedder_model: Annotated[
        OnnxPreset, typer.Option(help="The packaged sentence model.")
    ] = DEFAULT_PRESET,
    seed: Annotated[int, typer.Option()] = 7,
    vectors_cache: Annotated[
        Path | None, typer.Option(help="Folder keeping the pool's vectors between runs.")
    ] = None,
    served: Annotated[
        bool,
        typer.Option(
            help="Send the recalls over HTTP to `factledger serve` on PostgreSQL + pgvector, "
            "beside the floor and `/healthz`, instead of the in-process ways."
        ),
    ] = False,
    serve_with: Annotated[
        Path | None,
        typer.Option(
            help="With --served: the `factledger` executable to serve with (another build's "
            "install, to measure it beside this one's in one session); this install's by default."
        ),
    ] = None,
    served_beside: Annotated[
        Path | None,
        typer.Option(
            help="With --served: another build's `factledger`, served beside the first over the "
            "same data, its recalls and `/healthz` timed in the same blocks."
        ),
    ] = None,
    beside_policy: Annotated[
        str | None,
        typer.Option(
            help="In process: `Recall.recall` as served again with these recall policy keys "
            "replaced (JSON, e.g. '{\"under_floor\": null}'), timed in the same blocks."
        ),
    ] = None,
    facts_per_search: Annotated[
        int,
        typer.Option(
            min=0,
            help="In process: the default ways' mirrors earned at a search per this many facts "
            "of a namespace (ADR 0225); 0 earns them at the second search whatever the size.",
        ),
    ] = DEFAULT_FACTS_PER_SEARCH,
) -> None:
    """Recall where most subjects are met once: conversations over thousands of subjects, each
    way against the floor (query embedding + the bare exact search) in one run."""
    options = ContactCentreOptions(
        subjects=subjects,
        facts=facts,
        queries=queries,
        seed=seed,
        earn_after=tuple(earn_after or (1, 2)),
        vectors_cache=vectors_cache,
        serve_with=serve_with,
        served_beside=served_beside,
        beside_policy=None if beside_policy is None else json.loads(beside_policy),
        facts_per_search=facts_per_search or None,
    )
    # Logged as a served process logs (JSON lines at INFO), so recall's own log line costs what
    # it costs in production; the lines go nowhere, the report is the output.
    configure_logging(json_lines=True, level="INFO", stream=Path(os.devnull).open("w"))  # noqa: SIM115
    # No vector cache: every way embeds its query live, as the floor does.
    real = OnnxEmbedder(OnnxModelFiles.preset(embedder_model), threads=1, cached_vectors=0)
    if served:
        lines = asyncio.run(run_served(options, real, embedder_model.value, typer.echo))
    else:
        lines = asyncio.run(run_contact_centre(options, real, embedder_model.value, typer.echo))
    typer.echo("")
    typer.echo("\n".join(lines))


@pgvector_app.command("mirror-costs")
def mirror_costs(
    facts: Annotated[
        list[int] | None,
        typer.Option(min=10, help="A namespace size to measure (repeatable)."),
    ] = None,
    namespaces: Annotated[
        int, typer.Option(min=2, help="Namespaces of each size (the first warms up).")
    ] = 8,
    searches: Annotated[int, typer.Option(min=1, help="Searches of each namespace.")] = 20,
    embedder_model: Annotated[
        OnnxPreset, typer.Option(help="The packaged sentence model.")
    ] = DEFAULT_PRESET,
    vectors_cache: Annotated[
        Path | None, typer.Option(help="Folder keeping the pool's vectors between runs.")
    ] = None,
) -> None:
    """What a namespace's mirror costs to load and saves at each search, by size (ADR 0225)."""
    sizes = facts or [100, 300, 1_000, 2_000, 5_000]
    options = ContactCentreOptions(vectors_cache=vectors_cache)
    real = OnnxEmbedder(OnnxModelFiles.preset(embedder_model), threads=1)

    async def measured() -> list[str]:
        rows = [load_line("start"), "", *MIRROR_COSTS_HEADER]
        for size in sizes:
            costs = await measure_size(size, namespaces, searches, real, options)
            rows.append(costs.row())
            typer.echo(rows[-1])
        return [*rows, "", load_line("end")]

    lines = asyncio.run(measured())
    typer.echo("")
    typer.echo("\n".join(lines))


def render(report: BenchReport) -> str:
    """The results as a markdown table (pasted into docs/benchmarks.md)."""
    head = (
        "| backend | tier | facts | load | load rate | index build | search p50/p95/p99 ms "
        "(embedding excluded) | same, embedding included | recall@3 | floor p50/p95/p99 ms "
        "(embedding + SELECT 1) | included p95 / floor p95 |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head, *(_row(f) for f in report.figures)]
    return "\n".join([*lines, "", *(f"- {note}" for note in report.notes)])


def _row(f: Figures) -> str:
    rate = f"{f.facts / f.load_s:,.0f}/s ({f.load_note})" if f.load_s else f.load_note or "-"
    index = f"{f.index_s:.1f} s" if f.index_s is not None else "-"
    excluded = "/".join(f"{v:.2f}" for v in f.excluded_ms)
    included = "/".join(f"{v:.2f}" for v in f.included_ms)
    load = f"{f.load_s:.1f} s" if f.load_s else "-"
    searched = f.tier != "ingest_transcript"
    floor = "/".join(f"{v:.2f}" for v in f.floor_ms) if f.floor_ms else "-"
    ratio = f"{f.included_ms[1] / f.floor_ms[1]:.2f}x" if f.floor_ms and f.floor_ms[1] else "-"
    return (
        f"| {f.backend} | {f.tier} | {f.facts:,} | {load} | {rate} | {index} | "
        f"{excluded if searched else '-'} | {included if searched else '-'} | "
        f"{f'{f.recall:.3f}' if searched else '-'} | {floor} | {ratio} |"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(pgvector_app, name="pgvector")
