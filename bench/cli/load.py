"""`factledger-lab bench load`: simulated agents against real server processes on loopback."""

from __future__ import annotations

import json
import secrets
import shlex
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer
from pydantic import SecretStr
from rich.console import Console

from factledger.api.http.auth import Role, SubjectClaim, TokenRequest, mint_token
from factledger.api.settings import AuthSettings, JwtKeySettings
from factledger.bench.load.run import Credentials, LoadConfig, run_load
from factledger.bench.load.servers import TOPOLOGIES
from factledger.bench.load.stats import LevelFigures, latency_table, summary_table
from factledger.bench.machine import load_average

TENANT = "load"


def _credentials() -> Credentials:
    """A throwaway signing key for this run: the servers verify with it, the agents sign."""
    secret = secrets.token_urlsafe(32)
    auth = AuthSettings(
        environment="test",
        issuer="factledger-load",
        keys=(JwtKeySettings(kid="load", secret=SecretStr(secret)),),
    )
    server_env = {
        "FACTLEDGER_AUTH__ENVIRONMENT": "test",
        "FACTLEDGER_AUTH__ISSUER": auth.issuer,
        "FACTLEDGER_AUTH__AUDIENCE": auth.audience,
        "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "load", "secret": secret}]),
    }
    ttl = timedelta(hours=2)

    def agent_token(ref: str) -> str:
        claim = SubjectClaim(kind="lead", ref=ref)
        request = TokenRequest(Role.AGENT, TENANT, f"agent-{ref}", claim, ttl)
        return mint_token(auth, request)

    service = mint_token(auth, TokenRequest(Role.SERVICE, TENANT, "load-service", None, ttl))
    reviewer = mint_token(auth, TokenRequest(Role.REVIEWER, TENANT, "load-reviewer", None, ttl))
    return Credentials(server_env, service, agent_token, reviewer)


def _split(raw: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...]:
    names = tuple(part.strip() for part in raw.split(",") if part.strip())
    if not names or (allowed is not None and any(n not in allowed for n in names)):
        raise typer.BadParameter(f"choose from {', '.join(allowed or ())}")
    return names


def load(
    topologies: Annotated[
        str, typer.Option(help=f"Comma-separated: {', '.join(TOPOLOGIES)}.")
    ] = ",".join(TOPOLOGIES),
    clients: Annotated[str, typer.Option(help="Comma-separated client counts.")] = "16,64,128",
    seconds: Annotated[float, typer.Option(help="Per level, at most 600.")] = 30.0,
    max_requests: Annotated[int, typer.Option(help="Per level, a bound on requests.")] = 50_000,
    think_ms: Annotated[float, typer.Option(help="Mean pause between an agent's requests.")] = 100,
    client_processes: Annotated[
        int, typer.Option(help="Processes the agents are spread over (the load generator).")
    ] = 2,
    workdir: Annotated[
        Path | None, typer.Option(help="Data and logs of the servers (default: a temp dir).")
    ] = None,
) -> None:
    """Agents (context, recall per turn, appends, session ends with proposals, profile reads)
    against fresh server processes on loopback: per level, throughput, p50/p95/p99 per route,
    recalls over 1.05 s, degraded share, errors and server RSS, as markdown tables."""
    try:
        counts = tuple(int(n) for n in _split(clients))
    except ValueError:
        raise typer.BadParameter("clients: comma-separated integers") from None
    if any(not 1 <= n <= 512 for n in counts):
        raise typer.BadParameter("clients: each between 1 and 512")
    command = shlex.join(
        ["factledger-lab", "bench", "load", "--topologies", topologies, "--clients", clients,
         "--seconds", f"{seconds:g}", "--max-requests", str(max_requests),
         "--think-ms", f"{think_ms:g}", "--client-processes", str(client_processes)]
    )  # fmt: skip
    console = Console(stderr=True)
    with tempfile.TemporaryDirectory(prefix="factledger-load-") as scratch:
        try:
            config = LoadConfig(
                topologies=_split(topologies, TOPOLOGIES),
                clients=counts,
                seconds=seconds,
                max_requests=max_requests,
                think_s=think_ms / 1e3,
                client_processes=client_processes,
                workdir=workdir or Path(scratch),
            )
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        console.print(f"load average at start: {load_average()}")

        def report(level: LevelFigures) -> None:
            console.print(
                f"{level.topology} x {level.clients}: {level.requests} requests, "
                f"{level.late_recalls} late recalls ({level.late_in_app} in the app), "
                f"{level.server_errors} 5xx, {sum(level.transport_errors.values())} transport "
                "errors "
                f"(load {level.load_average})"
            )

        levels = run_load(config, _credentials(), report)
    typer.echo(f"Command: `{command}`\n")
    typer.echo(summary_table(levels))
    typer.echo("\nLatency per route, ms (p50 / p95 / p99):\n")
    typer.echo(latency_table(levels))


def register(group: typer.Typer) -> None:
    group.command(name="load")(load)
