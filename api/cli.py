"""The `factledger` command.

Each feature keeps its commands in its own `cli_<feature>.py` module, which exposes
`register(app)`; this module only assembles them.
"""

from __future__ import annotations

from importlib.metadata import version as installed_version

import typer

from factledger.api import (
    cli_api,
    cli_bench,
    cli_extraction,
    cli_ledger,
    cli_memory,
    cli_pgvector,
    cli_recall,
    cli_supermemory,
    cli_sync,
)

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
cli_api.register(app)
cli_memory.register(app)
cli_extraction.register(app)
cli_ledger.register(app)
cli_sync.register(app)
cli_recall.register(app)
cli_pgvector.register(app)
cli_supermemory.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
