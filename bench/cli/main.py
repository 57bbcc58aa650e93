"""The `factledger-lab` command: the benchmarks, the calibration fitting and the evaluation
sets, each feature's commands in its own module of this package (`register(app)`).

The lab is a client of the product: it imports `factledger.api` and below, and nothing in the
product imports it, so the product's own command (`factledger`) starts without any of this.
"""

from __future__ import annotations

from factledger.api.cli.assembly import assemble
from factledger.bench.cli import bench as cli_bench
from factledger.bench.cli import capacity as cli_capacity
from factledger.bench.cli import embedder as cli_embedder
from factledger.bench.cli import extraction as cli_extraction
from factledger.bench.cli import failover as cli_failover
from factledger.bench.cli import memory as cli_memory
from factledger.bench.cli import pgvector as cli_pgvector
from factledger.bench.cli import recall as cli_recall
from factledger.bench.cli import supermemory as cli_supermemory

app = assemble(
    "factledger-lab",
    "factledger's lab: benchmarks, calibration fitting and evaluations.",
    (
        cli_bench,
        cli_embedder,
        cli_memory,
        cli_extraction,
        cli_recall,
        cli_pgvector,
        cli_capacity,
        cli_failover,
        cli_supermemory,
    ),
)


def main() -> None:
    """Console-script entry point."""
    app()
