"""The `factledger` command.

Each feature keeps its commands in its own module of this package, which exposes
`register(app)`; this module only assembles them. The benchmarks and evaluations are the lab's
command (`factledger-lab`, `factledger.bench.cli`), which nothing here imports.
"""

from __future__ import annotations

from factledger.api.cli import console as cli_console
from factledger.api.cli import extraction as cli_extraction
from factledger.api.cli import importing as cli_importing
from factledger.api.cli import ledger as cli_ledger
from factledger.api.cli import mcp as cli_mcp
from factledger.api.cli import openapi as cli_openapi
from factledger.api.cli import pgvector as cli_pgvector
from factledger.api.cli import queue as cli_queue
from factledger.api.cli import serve as cli_serve
from factledger.api.cli import subjects as cli_subjects
from factledger.api.cli import sync as cli_sync
from factledger.api.cli import webhooks as cli_webhooks
from factledger.api.cli.assembly import assemble
from factledger.api.cli.commands import SUMMARY

app = assemble(
    "factledger",
    SUMMARY,
    (
        cli_serve,
        cli_sync,
        cli_extraction,
        cli_ledger,
        cli_queue,
        cli_pgvector,
        cli_subjects,
        cli_console,
        cli_mcp,
        cli_webhooks,
        cli_importing,
        cli_openapi,
    ),
)


def main() -> None:
    """Console-script entry point."""
    app()
