"""`factledger-lab supermemory serve`: the local Supermemory v5 server, for demos and manual tests.

Point the service at it with `FACTLEDGER_BACKEND__KIND=supermemory`,
`FACTLEDGER_BACKEND__BASE_URL=http://127.0.0.1:<port>` and `FACTLEDGER_BACKEND__API_KEY=<key>`.
It extracts with the rule-based extractor and listens on loopback only.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
import uvicorn

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.log_setup import configure_logging
from factledger.application.memory.ports import Embedder
from factledger.testing.supermemory.engine import ProcessingTiming
from factledger.testing.supermemory.faults import LatencyProfile
from factledger.testing.supermemory.server import DEFAULT_API_KEY, SupermemoryServer

supermemory_app = typer.Typer(help="The local Supermemory server.", no_args_is_help=True)


class EmbedderChoice(StrEnum):
    ONNX = "onnx"
    HASHING = "hashing"


class LatencyChoice(StrEnum):
    NONE = "none"
    OBSERVED = "observed"  # ~0.5 s typical, a 38 s stall once in a hundred requests


@supermemory_app.command("serve")
def serve(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Loopback port.")] = 8787,
    api_key: Annotated[
        str, typer.Option(envvar="SUPERMEMORY_LOCAL_API_KEY", help="Bearer key to require.")
    ] = DEFAULT_API_KEY,
    embedder: Annotated[EmbedderChoice, typer.Option(help="Embedder.")] = EmbedderChoice.ONNX,
    latency: Annotated[LatencyChoice, typer.Option(help="Injected latency.")] = (
        LatencyChoice.NONE
    ),
    dreaming_s: Annotated[
        float, typer.Option(min=0.0, help="Delay before batched documents form memories.")
    ] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed of ids and injected latency.")] = 0,
) -> None:
    """Serve the v5 endpoints the adapter uses on 127.0.0.1, validated against the spec."""
    configure_logging(json_lines=False, level="WARNING")
    chosen: Embedder = OnnxEmbedder() if embedder is EmbedderChoice.ONNX else HashingEmbedder()
    server = SupermemoryServer(
        RuleExtractor(),
        chosen,
        api_key=api_key,
        timing=ProcessingTiming(dreaming_s=dreaming_s),
        latency=LatencyProfile.observed(seed=seed) if latency is LatencyChoice.OBSERVED else None,
        seed=seed,
    )
    typer.echo(f"local Supermemory v5 server on http://127.0.0.1:{port}")
    uvicorn.run(server.app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


def register(app: typer.Typer) -> None:
    app.add_typer(supermemory_app, name="supermemory")
