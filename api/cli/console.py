"""`factledger console-link`: a development sign-in link for the console (ADR 0019)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from factledger.api.console.guard import CONSOLE_ROLES
from factledger.api.http.auth import Role, TokenRequest, mint_token
from factledger.api.settings import SettingsError, load_settings


def console_link(
    tenant: Annotated[str, typer.Option(help="The tenant to review (the demo's is `acme`).")],
    role: Annotated[Role, typer.Option(help="reviewer, analyst or admin.")] = Role.REVIEWER,
    principal: Annotated[str, typer.Option(help="Who signs in (the token's `sub`).")] = "dev",
    ttl_minutes: Annotated[int, typer.Option(min=1, max=24 * 60)] = 15,
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
    request = TokenRequest(
        role=role, tenant=tenant, principal_id=principal, ttl=timedelta(minutes=ttl_minutes)
    )
    try:
        token = mint_token(settings.auth, request)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    api = settings.api
    typer.echo(f"http://{api.host}:{api.port}/console/sign-in#token={token}")


def register(app: typer.Typer) -> None:
    app.command("console-link")(console_link)
