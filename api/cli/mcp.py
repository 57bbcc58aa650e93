"""`factledger mcp`: the MCP tools over stdio, acting for the agent token in the environment."""

from __future__ import annotations

import os

import typer

from factledger.api.http.auth import TokenVerifier
from factledger.api.log_setup import configure_logging
from factledger.api.settings import SettingsError, load_settings

# What a missing or refused token exits with: the usage error's code, as for a bad option.
TOKEN_REFUSED_EXIT = 2


def mcp() -> None:
    """Serve the MCP tools over stdio for the agent token in FACTLEDGER_MCP_TOKEN."""
    # The MCP SDK loads with the one command that speaks MCP over stdio, never with `serve`'s
    # start (which mounts MCP over HTTP on first use).
    from factledger.api.mcp.stdio import TOKEN_ENV, TokenRefusedError, check_token, run

    try:
        settings = load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None
    token = os.environ.get(TOKEN_ENV)
    try:
        check_token(TokenVerifier(settings.auth), token)
    except TokenRefusedError as exc:
        typer.echo(f"factledger mcp: {exc}", err=True)
        raise typer.Exit(TOKEN_REFUSED_EXIT) from None
    assert token is not None  # noqa: S101 - check_token refuses a missing one
    # Stdout is the protocol's: the logs go to stderr.
    configure_logging(json_lines=settings.log_json)
    run(settings, token.strip())


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
