"""Which module of this package keeps each top-level command of `factledger`.

The console script (`api.cli.entry`) imports only the module of the command it runs: a
`factledger serve` then never imports the other commands' modules, nor what only they need
(the PostgreSQL driver for `worker` and `pgvector`, the importers' converters). Any other
command line (`--help`, a typo) loads the whole set (`api.cli.main`). A test checks this table
against what each module registers.
"""

from __future__ import annotations

SUMMARY = "Event-sourced memory for AI agents."

_CLI = "factledger.api.cli"
COMMAND_MODULES: dict[str, str] = {
    "serve": f"{_CLI}.serve",
    "token": f"{_CLI}.serve",
    "worker": f"{_CLI}.sync",
    "dead-letters": f"{_CLI}.sync",
    "extraction": f"{_CLI}.extraction",
    "demo": f"{_CLI}.ledger",
    "history": f"{_CLI}.ledger",
    "replay": f"{_CLI}.ledger",
    "projections": f"{_CLI}.ledger",
    "queue": f"{_CLI}.queue",
    "pgvector": f"{_CLI}.pgvector",
    "subjects": f"{_CLI}.subjects",
    "console-link": f"{_CLI}.console",
    "mcp": f"{_CLI}.mcp",
    "webhooks": f"{_CLI}.webhooks",
    "import": f"{_CLI}.importing",
    "openapi": f"{_CLI}.openapi",
}
