"""The `factledger` console script. `factledger version` answers from the package's metadata
alone: loading the command set imports the whole service (the app, its stores, the console),
which a version check has no use for. Every other command line goes to `api.cli.main`."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version


def main() -> None:
    if sys.argv[1:] == ["version"]:
        print(version("factledger"))  # noqa: T201 - the command's whole output
        return
    with imports_without_collection():
        from factledger.api.cli.main import main as run_command

    run_command()


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
