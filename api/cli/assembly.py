"""How a factledger command line is put together: a root with its help, `version`, and each
feature's commands from the module that keeps them (`register(app)`). The product's command
and the lab's both assemble theirs here, so the two cannot drift in how they start.

Logging is configured once, by the root, before any command runs: to stderr, at WARNING, so
what a command prints on stdout (tables, JSON lines, a link) is its output alone. Unconfigured,
structlog would print every line to stdout. The long-running commands (`serve`, the worker,
`mcp`, the webhook sender) configure their own level from their settings when they start."""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import version as installed_version
from typing import Protocol

import typer
from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from factledger.api.log_setup import configure_logging


class CommandModule(Protocol):
    """A module of a command package: it adds its feature's commands to the app."""

    def register(self, app: typer.Typer) -> None: ...


class _LogSettings(BaseSettings):
    """The one setting logging needs before a command loads (and checks) all the others."""

    model_config = SettingsConfigDict(env_prefix="FACTLEDGER_", extra="ignore")
    log_json: bool = False


def configure_command_logging() -> None:
    """Every command's logging: stderr, WARNING, JSON lines when `FACTLEDGER_LOG_JSON` says
    so. A malformed value falls back to the console's lines; the command's own settings
    name it."""
    try:
        json_lines = _LogSettings().log_json
    except ValidationError:
        json_lines = False
    configure_logging(json_lines=json_lines, level="WARNING")


def assemble(name: str, summary: str, modules: Iterable[CommandModule]) -> typer.Typer:
    app = typer.Typer(name=name, help=summary, no_args_is_help=True, add_completion=False)

    def root() -> None:
        configure_command_logging()

    root.__doc__ = summary
    app.callback()(root)

    @app.command()
    def version() -> None:
        """Print the installed version."""
        typer.echo(installed_version("factledger"))

    for module in modules:
        module.register(app)
    return app
