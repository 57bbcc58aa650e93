"""The console script loads only the module of the command it runs (`api.cli.commands`): the
table it reads must name, for every command and group of `factledger`, the module that
registers it, or that command would be missing (or another's module loaded) on its own."""

from __future__ import annotations

import importlib

import typer
from typer.main import get_command_name
from typer.models import CommandInfo

from factledger.api.cli.commands import COMMAND_MODULES
from factledger.api.cli.entry import command_line_app
from factledger.api.cli.main import app as whole


def registered_names(app: typer.Typer) -> set[str]:
    commands = {command_name(command) for command in app.registered_commands}
    groups = {group.name or "" for group in app.registered_groups}
    return commands | groups


def command_name(command: CommandInfo) -> str:
    """The name typer gives a command registered without one: its function's, dashed."""
    if command.name is not None:
        return command.name
    assert command.callback is not None
    return get_command_name(command.callback.__name__)


def test_each_command_is_listed_with_the_module_that_registers_it() -> None:
    for module_name in set(COMMAND_MODULES.values()):
        alone = typer.Typer()
        importlib.import_module(module_name).register(alone)
        listed = {name for name, module in COMMAND_MODULES.items() if module == module_name}
        assert registered_names(alone) == listed, module_name


def test_the_table_covers_the_whole_command_set() -> None:
    assert registered_names(whole) - {"version"} == set(COMMAND_MODULES)


def test_a_command_line_starting_with_a_command_gets_that_module_alone() -> None:
    serve = command_line_app(["serve"])
    assert isinstance(serve, typer.Typer)
    assert registered_names(serve) == {"serve", "token", "version"}
    assert command_line_app(["--help"]) is whole
    assert command_line_app([]) is whole
