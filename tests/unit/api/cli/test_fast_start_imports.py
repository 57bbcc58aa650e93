"""`factledger serve` and the API app start without the benchmarks, plotting or `onnx`: checked in
a fresh interpreter, through `sys.modules`, so nothing this test session imported counts."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# `onnx` (the graph compiler's) is needed only when no compiled graph is cached.
HEAVY = ("factledger.bench", "matplotlib", "factledger.testing", "onnx.", "ml_dtypes")


def _imported_after(script: str) -> list[str]:
    probe = textwrap.dedent(script) + textwrap.dedent(
        f"""
        import json, sys
        heavy = {HEAVY!r}
        print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy) or m == "onnx")))
        """
    )
    out = subprocess.run(  # noqa: S603 - this interpreter, our own probe
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def test_importing_and_building_the_api_app_imports_no_benchmark() -> None:
    script = """
        from factledger.api.http.app import create_app
        create_app()
        """
    assert _imported_after(script) == []


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_the_fast_starting_commands_import_no_benchmark(command: str) -> None:
    script = f"""
        import sys
        sys.argv = ["factledger", "{command}", "--help"]
        from factledger.api.cli.main import main
        try:
            main()
        except SystemExit:
            pass
        """
    assert _imported_after(script) == []


def test_the_full_command_set_still_has_the_benchmarks() -> None:
    from factledger.api.cli.main import full_app

    names = {group.name for group in full_app().registered_groups}
    assert "bench" in names
