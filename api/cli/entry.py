"""The `factledger` console script. `factledger version` answers from the package's metadata
alone: loading the command set imports the whole service (the app, its stores, the console),
which a version check has no use for. Every other command line goes to `api.cli.main`."""

from __future__ import annotations

import sys
from importlib.metadata import version


def main() -> None:
    if sys.argv[1:] == ["version"]:
        print(version("factledger"))  # noqa: T201 - the command's whole output
        return
    from factledger.api.cli.main import main as run_command

    run_command()
