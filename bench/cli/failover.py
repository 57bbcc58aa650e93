"""`factledger-lab failover`: acknowledged writes lost when the primary is killed and its
standby promoted, with and without synchronous replication (`bench.failover`)."""

from __future__ import annotations

from typing import Annotated

import typer

from factledger.api.log_setup import configure_logging
from factledger.bench.failover import run


def failover(
    rounds: Annotated[int, typer.Option(min=1, help="Rounds of each mode.")] = 3,
    writers: Annotated[int, typer.Option(min=1, help="Callers writing side by side.")] = 4,
    before_kill_s: Annotated[
        float, typer.Option(min=0.5, help="Seconds of writes before the kill.")
    ] = 3.0,
) -> None:
    """Start a primary and a hot standby from the embedded binaries, register subjects through
    the API from several callers, `kill -9` the primary, promote the standby and count the
    acknowledged registrations that are gone: asynchronous, then synchronous replication."""
    configure_logging(json_lines=False)
    run(rounds=rounds, writers=writers, before_kill_s=before_kill_s, echo=typer.echo)


def register(app: typer.Typer) -> None:
    app.command("failover")(failover)
