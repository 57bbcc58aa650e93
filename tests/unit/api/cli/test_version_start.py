"""`factledger version` answers without loading the service: checked in a fresh interpreter,
through `sys.modules`, so nothing this test session imported counts."""

from __future__ import annotations

import gc
import importlib
import json
import subprocess
import sys
import textwrap
from importlib.metadata import version

import pytest

from factledger.api.cli.entry import imports_without_collection

# Each of these is the service (the web stack, the event store, the MCP SDK, our layers).
SERVICE = ("fastapi", "starlette", "uvicorn", "eventsourcing", "mcp", "typer", "factledger.")
ENTRY = {
    "factledger.api",
    "factledger.api.cli",
    "factledger.api.cli.entry",
    "factledger.api.cli.commands",
}


def run_entry_point(*args: str) -> dict[str, object]:
    probe = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        sys.argv = ["factledger", *{list(args)!r}]
        from factledger.api.cli.entry import main
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            try:
                main()
            except SystemExit:
                pass
        loaded = sorted(m for m in sys.modules if m.startswith({SERVICE!r}))
        import gc
        collector = {{"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}}
        print(json.dumps({{"printed": printed.getvalue(), "loaded": loaded, "gc": collector}}))
        """
    )
    out = subprocess.run(  # noqa: S603 - this interpreter, our own probe
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def test_version_imports_nothing_of_the_service() -> None:
    result = run_entry_point("version")
    assert result["printed"] == f"{version('factledger')}\n"
    assert set(result["loaded"]) <= ENTRY  # type: ignore[arg-type]


def test_every_other_command_line_reaches_the_full_command() -> None:
    result = run_entry_point("version", "--help")
    assert "Print the installed version." in str(result["printed"])
    assert "factledger.api.cli.main" in result["loaded"]  # type: ignore[operator]


def test_a_command_runs_with_the_collector_on_and_the_imports_frozen() -> None:
    # The command set is imported with the collector paused; the command itself must not run
    # with it paused, or a long `serve` would never collect a cycle.
    result = run_entry_point("version", "--help")
    collector = result["gc"]
    assert isinstance(collector, dict)
    assert collector["enabled"] is True
    assert collector["frozen"] > 100_000  # the service's import-time objects


def test_the_collector_is_given_back_as_it_was_even_when_an_import_fails() -> None:
    frozen = gc.get_freeze_count()
    paused: list[bool] = []

    def failing_import() -> None:
        with imports_without_collection():
            paused.append(not gc.isenabled())
            importlib.import_module("factledger.no_such_module")

    with pytest.raises(ModuleNotFoundError):
        failing_import()
    assert paused == [True]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen
    gc.disable()
    try:
        with imports_without_collection():
            pass
        assert not gc.isenabled()  # paused by someone else: left paused
    finally:
        gc.enable()
        gc.unfreeze()
