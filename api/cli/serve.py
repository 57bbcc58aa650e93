"""`factledger serve` (the HTTP API, its console at `/console` and the MCP tools at `/mcp`) and
`factledger token mint` (development tokens)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer
import uvicorn
from fastapi import FastAPI

from factledger.api.cli.tenants import checked_tenant
from factledger.api.console.app import create_app as create_app_with_console
from factledger.api.http.auth import Role, SubjectClaim, TokenRequest, mint_token
from factledger.api.log_setup import configure_logging
from factledger.api.mcp.http import mount_mcp
from factledger.api.mcp.resource import ProtectedResource
from factledger.api.settings import (
    InMemoryBackendSettings,
    PostgresSyncStoreSettings,
    Settings,
    SettingsError,
    load_settings,
)

token_app = typer.Typer(help="Development tokens, signed with the configured keys.")


def create_served_app(*, routes_after_ready: bool = True) -> FastAPI:
    """What `factledger serve` runs in each worker: the API, the console and the MCP tools.
    The console and MCP stand side by side on the API, so they meet only here. A served app
    has its health routes at once and the others once it is ready
    (`api.http.deferred_routes`); with `routes_after_ready=False`, all at once."""
    settings = Settings()
    app = create_app_with_console(settings, routes_after_ready=routes_after_ready)
    mount_mcp(app, ProtectedResource.of(settings.api, settings.auth))
    return app


def serve(
    host: Annotated[str | None, typer.Option(help="Default: FACTLEDGER_API__HOST.")] = None,
    port: Annotated[int | None, typer.Option(help="Default: FACTLEDGER_API__PORT.")] = None,
    workers: Annotated[int | None, typer.Option(help="Processes (share one PostgreSQL).")] = None,
) -> None:
    """Run the HTTP API, with the console at /console and the MCP tools at /mcp (embedded
    default, or PostgreSQL / pgvector / Supermemory by settings)."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None
    processes = workers or settings.api.workers
    if processes > 1 and not _shareable(settings):
        raise typer.BadParameter(
            "several workers need shared state: a PostgreSQL sync store and a backend other "
            "than in-memory (FACTLEDGER_SYNC__STORE__KIND=postgres, FACTLEDGER_BACKEND__KIND=...)"
        )
    console = settings.console
    if processes > 1 and console.enabled and console.session_secret is None:
        # Each process would sign console sessions with its own random key.
        raise typer.BadParameter(
            "several workers need one console session key: FACTLEDGER_CONSOLE__SESSION_SECRET "
            "(or FACTLEDGER_CONSOLE__ENABLED=false)"
        )
    # uvicorn installs no handlers of its own (`log_config=None`): its lines go through ours,
    # which never print a traceback's values. The factory configures each worker again.
    configure_logging(json_lines=settings.log_json)
    # The factory builds settings again in each worker process, from the same environment.
    uvicorn.run(
        "factledger.api.cli.serve:create_served_app",
        factory=True,
        host=host or settings.api.host,
        port=port or settings.api.port,
        workers=processes,
        proxy_headers=True,
        server_header=False,
        access_log=False,  # the request middleware logs one structured line per request
        log_config=None,
    )


@token_app.command("mint")
def mint(
    role: Annotated[Role, typer.Option(help="agent, reviewer, analyst, admin or service.")],
    tenant: Annotated[str, typer.Option(help="The tenant the token acts in.")],
    subject: Annotated[
        str | None,
        typer.Option(help="Agent tokens: `kind:external_ref` (e.g. lead:crm-17) or a subject id."),
    ] = None,
    principal: Annotated[str, typer.Option(help="Who acts (the token's `sub`).")] = "dev",
    ttl_minutes: Annotated[int, typer.Option(min=1, max=24 * 60)] = 60,
    kid: Annotated[str | None, typer.Option(help="Signing key id (default: the first).")] = None,
    private_key: Annotated[
        Path | None, typer.Option(help="PEM private key, for RS256 / EdDSA keys.")
    ] = None,
) -> None:
    """Print a signed token, as the platform would issue it (for development and tests)."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None
    checked_tenant(settings.auth, tenant)
    claim = _subject_claim(subject)
    if (role is Role.AGENT) != (claim is not None):
        raise typer.BadParameter("--subject is required for agent tokens, and only for them")
    request = TokenRequest(
        role=role,
        tenant=tenant,
        principal_id=principal,
        subject=claim,
        ttl=timedelta(minutes=ttl_minutes),
    )
    pem = None if private_key is None else private_key.read_text()
    try:
        token = mint_token(settings.auth, request, kid=kid, private_key_pem=pem)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    typer.echo(token)


def _shareable(settings: Settings) -> bool:
    """Whether several API processes would see one state (not one in-memory copy each)."""
    return not isinstance(settings.backend, InMemoryBackendSettings) and isinstance(
        settings.sync.store, PostgresSyncStoreSettings
    )


def _subject_claim(raw: str | None) -> SubjectClaim | None:
    if raw is None:
        return None
    kind, sep, ref = raw.partition(":")
    if sep:
        return SubjectClaim(kind=kind, ref=ref)
    return SubjectClaim(subject_id=raw)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.add_typer(token_app, name="token")
