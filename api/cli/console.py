"""`factledger console-link`: a development sign-in link for the console."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from factledger.api.cli.tenants import checked_tenant
from factledger.api.console.guard import CONSOLE_ROLES
from factledger.api.http.auth import Role, TokenRequest, mint_token
from factledger.api.settings import SettingsError, load_settings


def console_link(
    tenant: Annotated[str, typer.Option(help="The tenant to review (the demo's is `acme`).")],
    role: Annotated[Role, typer.Option(help="reviewer, analyst or admin.")] = Role.REVIEWER,
    principal: Annotated[str, typer.Option(help="Who signs in (the token's `sub`).")] = "dev",
    ttl_minutes: Annotated[int, typer.Option(min=1, max=24 * 60)] = 15,
    host: Annotated[
        str | None, typer.Option(help="As given to `serve --host`. Default: FACTLEDGER_API__HOST.")
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            min=1, max=65535, help="As given to `serve --port`. Default: FACTLEDGER_API__PORT."
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="Where the browser reaches the server (a proxy, TLS). Default: "
            "FACTLEDGER_API__PUBLIC_URL, else http://HOST:PORT."
        ),
    ] = None,
) -> None:
    """Print a link that signs in to the console of `factledger serve` with a dev token.

    The token rides in the link's fragment, which the browser never sends to the server.
    """
    if role not in CONSOLE_ROLES:
        raise typer.BadParameter("the console is for reviewer, analyst and admin tokens")
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None
    checked_tenant(settings.auth, tenant)
    if base_url is not None and (host is not None or port is not None):
        raise typer.BadParameter("give --base-url, or --host / --port, not both")
    request = TokenRequest(
        role=role, tenant=tenant, principal_id=principal, ttl=timedelta(minutes=ttl_minutes)
    )
    try:
        token = mint_token(settings.auth, request)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    server = (base_url or "").rstrip("/") or settings.api.base_url(host=host, port=port)
    typer.echo(f"{server}/console/sign-in#token={token}")


def register(app: typer.Typer) -> None:
    app.command("console-link")(console_link)
