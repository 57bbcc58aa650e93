"""`factledger serve` and the API app start without the lab, the testing layer, plotting or
`onnx`: checked in a fresh interpreter, through `sys.modules`, so nothing this test session
imported counts. The product's command imports none of the lab at all: the benchmarks are the
lab's own command, `factledger-lab`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import typer

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
def test_the_serving_commands_import_no_benchmark(command: str) -> None:
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


def test_the_benchmarks_are_the_labs_command_not_the_products() -> None:
    from factledger.api.cli.main import app as product
    from factledger.bench.cli.main import app as lab

    def groups(app: typer.Typer) -> set[str | None]:
        return {group.name for group in app.registered_groups}

    assert {"bench", "embedder", "memory", "recall"} <= groups(lab)
    assert not {"bench", "embedder", "memory", "recall"} & groups(product)
    assert "bench" not in {command.name for command in product.registered_commands}


def test_a_start_to_ready_leaves_the_deferred_libraries_to_after_ready() -> None:
    # The command and the served app, as `factledger serve` imports and builds them; the
    # lemmatiser, the secret detectors and the vendor SDK come later
    # (`api/bootstrap/deferred_imports.py`), the model runtime with the model's load, the
    # routes once ready (`api/http/deferred_routes.py`). The PostgreSQL driver and the other
    # commands' modules never come to an embedded start.
    probe = textwrap.dedent(
        """
        import json, sys
        from factledger.api.cli.entry import command_line_app
        command_line_app(["serve"])
        from factledger.api.cli.serve import create_served_app
        create_served_app()
        never = sorted(
            m for m in sys.modules
            if m.split(".")[0] in ("psycopg", "psycopg_pool", "pgvector")
            or m.startswith(("factledger.adapters.postgres.", "factledger.adapters.pgvector"))
            or m in ("factledger.api.cli.main", "factledger.api.cli.sync")
            or m in ("factledger.api.http.route_set", "factledger.api.console.build")
        )
        later = (
            "simplemma", "detect_secrets", "requests", "supermemory", "onnxruntime", "tokenizers",
            "pysbd",
        )
        before = sorted(m for m in later if m in sys.modules)
        from factledger.api.bootstrap.deferred_imports import import_deferred
        import_deferred()
        after = sorted(m for m in later if m in sys.modules)
        print(json.dumps([never, before, after]))
        """
    )
    out = subprocess.run(  # noqa: S603 - this interpreter, our own probe
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    never, before, after = json.loads(out.strip().splitlines()[-1])
    assert never == []
    assert before == []
    assert after == ["detect_secrets", "pysbd", "requests", "simplemma"]
