"""The `factledger` command.

Each feature keeps its commands in its own module of this package, which exposes
`register(app)`; this module only assembles them. The processes that must start fast (`serve`,
`worker`) get an app of their own modules only: the others import the benchmarks, their
workloads and servers, which cost most of a cold start (issue 19).
"""

from __future__ import annotations

import sys
from functools import cache
from importlib.metadata import version as installed_version

import typer

from factledger.api.cli import serve as cli_api
from factledger.api.cli import sync as cli_sync

# Top-level commands whose modules import nothing of the benchmarks.
FAST_STARTING = frozenset({"serve", "token", "worker", "dead-letters", "version"})


def _bare_app() -> typer.Typer:
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

    cli_api.register(app)
    cli_sync.register(app)
    return app


@cache
def full_app() -> typer.Typer:
    """Every command (what `factledger --help` lists); imported here, not at the top, so
    that `serve` and `worker` never import the benchmarks."""
    from factledger.api.cli import bench as cli_bench
    from factledger.api.cli import console as cli_console
    from factledger.api.cli import embedder as cli_embedder
    from factledger.api.cli import extraction as cli_extraction
    from factledger.api.cli import importing as cli_importing
    from factledger.api.cli import ledger as cli_ledger
    from factledger.api.cli import mcp as cli_mcp
    from factledger.api.cli import memory as cli_memory
    from factledger.api.cli import openapi as cli_openapi
    from factledger.api.cli import pgvector as cli_pgvector
    from factledger.api.cli import recall as cli_recall
    from factledger.api.cli import subjects as cli_subjects
    from factledger.api.cli import supermemory as cli_supermemory
    from factledger.api.cli import webhooks as cli_webhooks

    app = _bare_app()
    for module in (
        cli_bench,
        cli_embedder,
        cli_memory,
        cli_extraction,
        cli_ledger,
        cli_recall,
        cli_pgvector,
        cli_supermemory,
        cli_subjects,
        cli_console,
        cli_mcp,
        cli_webhooks,
        cli_importing,
        cli_openapi,
    ):
        module.register(app)
    return app


def fast_app() -> typer.Typer:
    """`serve`, `token`, `worker` and `dead-letters` only."""
    return _bare_app()


def __getattr__(name: str) -> typer.Typer:
    # `from factledger.api.cli.main import app` (tests, scripts) gets every command.
    if name == "app":
        return full_app()
    raise AttributeError(name)


def main() -> None:
    """Console-script entry point."""
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    (fast_app() if command in FAST_STARTING else full_app())()
