"""The `factledger` console script. `factledger version` answers from the package's metadata
alone: loading the command set imports the whole service (the app, its stores, the console),
which a version check has no use for. A command line that starts with a command's name loads
only the module that keeps that command (`api.cli.commands`); any other goes to
`api.cli.main`, the whole set."""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import version

from factledger.api.cli.commands import COMMAND_MODULES, SUMMARY


def main() -> None:
    if sys.argv[1:] == ["version"]:
        print(version("factledger"))  # noqa: T201 - the command's whole output
        return
    with imports_without_collection():
        run_command = command_line_app(sys.argv[1:2])
    run_command()


def command_line_app(first: list[str]) -> Callable[[], object]:
    """The app for a command line whose first argument is `first`: the module of that
    command alone, or the whole command set."""
    module = COMMAND_MODULES.get(first[0]) if first else None
    if module is None:
        from factledger.api.cli.main import app
    else:
        from factledger.api.cli.assembly import assemble

        app = assemble("factledger", SUMMARY, [importlib.import_module(module)])
    return app


@contextmanager
def imports_without_collection() -> Iterator[None]:
    """Imports with the cyclic garbage collector paused, then moves what they made to the
    collector's permanent generation.

    Importing the service makes some 260,000 objects (classes, functions, schemas), nearly
    none of them garbage; with the collector running, its full passes over them took a fifth
    of the imports' CPU, the largest part of a start to ready. Frozen, they are never
    traversed again, so later full collections (while serving, under load) skip them too."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
