"""The `factledger` command.

Each feature keeps its commands in its own module of this package, which exposes
`register(app)`; this module only assembles them.
"""

from __future__ import annotations

from importlib.metadata import version as installed_version

import typer

from factledger.api.cli import bench as cli_bench
from factledger.api.cli import console as cli_console
from factledger.api.cli import embedder as cli_embedder
from factledger.api.cli import extraction as cli_extraction
from factledger.api.cli import importing as cli_importing
from factledger.api.cli import ledger as cli_ledger
from factledger.api.cli import mcp as cli_mcp
from factledger.api.cli import memory as cli_memory
from factledger.api.cli import pgvector as cli_pgvector
from factledger.api.cli import recall as cli_recall
from factledger.api.cli import serve as cli_api
from factledger.api.cli import subjects as cli_subjects
from factledger.api.cli import supermemory as cli_supermemory
from factledger.api.cli import sync as cli_sync
from factledger.api.cli import webhooks as cli_webhooks

app = typer.Typer(
    name="factledger",
    help="Event-sourced memory for AI agents.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def root() -> None:
    """Event-sourced memory for AI agents."""


@app.command()
def version() -> None:
    """Print the installed version."""
    typer.echo(installed_version("factledger"))


cli_bench.register(app)
cli_console.register(app)
cli_embedder.register(app)
cli_api.register(app)
cli_memory.register(app)
cli_mcp.register(app)
cli_extraction.register(app)
cli_ledger.register(app)
cli_sync.register(app)
cli_recall.register(app)
cli_pgvector.register(app)
cli_supermemory.register(app)
cli_subjects.register(app)
cli_webhooks.register(app)
cli_importing.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
