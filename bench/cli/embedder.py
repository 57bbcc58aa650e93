"""`factledger-lab embedder bench` and `factledger-lab embedder serve-start`: what the embedder's
graph costs at start-up and per query (docs/benchmarks.md)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    OnnxModelFiles,
    OnnxPreset,
)
from factledger.bench.cli import calibration as cli_calibration
from factledger.bench.embedder_batching import facts, measure_batching
from factledger.bench.embedder_batching import render as render_batching
from factledger.bench.embedder_bench import BenchOptions, render, run
from factledger.bench.serve_start import Contender, default_executable, measure_serve_start
from factledger.bench.serve_start import render as render_starts

embedder_app = typer.Typer(help="Embedder tools.", no_args_is_help=True)


@embedder_app.command("bench")
def bench(
    model: Annotated[OnnxPreset, typer.Option(help="The packaged model.")] = DEFAULT_PRESET,
    rounds: Annotated[int, typer.Option(min=1, help="Ready-time rounds (median).")] = 5,
    queries: Annotated[int, typer.Option(min=20, help="Timed queries per graph.")] = 500,
    pool: Annotated[int, typer.Option(min=1, help="Sentences for the throughput.")] = 300,
) -> None:
    """Compare the encoder graphs: ready time cold and warm, latency, throughput, cosine."""
    options = BenchOptions(rounds=rounds, queries=queries, pool=pool)
    with tempfile.TemporaryDirectory(prefix="factledger-embedder-bench-") as workdir:
        result = run(OnnxModelFiles.preset(model), Path(workdir), options)
    typer.echo(render(result))


@embedder_app.command("serve-start")
def serve_start(
    runs: Annotated[int, typer.Option(min=1, help="Starts per contender (median).")] = 7,
    baseline: Annotated[
        Path | None, typer.Option(help="Another `factledger` executable to time alongside.")
    ] = None,
) -> None:
    """Time `factledger serve` from launch to its first 200 on /readyz, on loopback: this
    install with a graph cache (its first start fills it) and without one, and a baseline."""
    this = default_executable()
    contenders = [
        Contender("graph cache", this, cache=True),
        Contender("no graph cache", this, cache=False),
    ]
    if baseline is not None:
        contenders.append(Contender("baseline", baseline, cache=False))
    with tempfile.TemporaryDirectory(prefix="factledger-serve-start-") as workdir:
        seconds = measure_serve_start(contenders, Path(workdir), runs=runs)
    typer.echo(render_starts(seconds))


@embedder_app.command("batching")
def batching(
    model: Annotated[OnnxPreset, typer.Option(help="The packaged model.")] = DEFAULT_PRESET,
    texts: Annotated[int, typer.Option(min=8, help="Distinct fact-sized texts.")] = 128,
    repeats: Annotated[int, typer.Option(min=1, help="Passes timed (the best kept).")] = 3,
) -> None:
    """CPU per fact-sized text one per run against batches padded to their longest, with
    int8 and float activations, and how far a batched text's vector moves."""
    typer.echo("Command: `factledger-lab embedder batching "
               f"--model {model.value} --texts {texts} --repeats {repeats}`\n")  # fmt: skip
    rows = measure_batching(model, facts(texts), (4, 8, 16, 32), repeats=repeats)
    typer.echo(render_batching(rows))


embedder_app.command("calibrate")(cli_calibration.calibrate)


def register(app: typer.Typer) -> None:
    app.add_typer(embedder_app, name="embedder")
