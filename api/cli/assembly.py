"""How a factledger command line is put together: a root with its help, `version`, and each
feature's commands from the module that keeps them (`register(app)`). The product's command
and the lab's both assemble theirs here, so the two cannot drift in how they start."""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import version as installed_version
from typing import Protocol

import typer


class CommandModule(Protocol):
    """A module of a command package: it adds its feature's commands to the app."""

    def register(self, app: typer.Typer) -> None: ...


def assemble(name: str, summary: str, modules: Iterable[CommandModule]) -> typer.Typer:
    app = typer.Typer(name=name, help=summary, no_args_is_help=True, add_completion=False)

    def root() -> None:
        pass  # only a group: every invocation names a command

    root.__doc__ = summary
    app.callback()(root)

    @app.command()
    def version() -> None:
        """Print the installed version."""
        typer.echo(installed_version("factledger"))

    for module in modules:
        module.register(app)
    return app
