"""`factledger version` answers without loading the service: checked in a fresh interpreter,
through `sys.modules`, so nothing this test session imported counts."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib.metadata import version

# Each of these is the service (the web stack, the event store, the MCP SDK, our layers).
SERVICE = ("fastapi", "starlette", "uvicorn", "eventsourcing", "mcp", "typer", "factledger.")
ENTRY = {"factledger.api", "factledger.api.cli", "factledger.api.cli.entry"}


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
        print(json.dumps({{"printed": printed.getvalue(), "loaded": loaded}}))
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
