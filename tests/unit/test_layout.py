"""The package installs as one `factledger` namespace with a subpackage per layer."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

LAYERS = [
    "domain",
    "application",
    "adapters",
    "projections",
    "api",
    "client",
    "integrations",
    "testing",
]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_imports_under_the_factledger_namespace(layer: str) -> None:
    module = importlib.import_module(f"factledger.{layer}")
    assert module.__name__ == f"factledger.{layer}"


def test_no_generic_top_level_package_is_installed(tmp_path: Path) -> None:
    # Isolated mode (-I) in an empty folder: only the installed distribution is on sys.path,
    # whatever folder this test runs from (`python -m pytest` puts the checkout on it).
    probe = (
        "import importlib.util as u, sys;"
        "found = [n for n in sys.argv[1:] if u.find_spec(n)]; print(','.join(found))"
    )
    names = [*LAYERS, "bench"]
    answer = subprocess.run(  # noqa: S603 - our own interpreter and a fixed probe
        [sys.executable, "-I", "-c", probe, *names, *(f"factledger.{n}" for n in names)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert answer.stdout.strip().split(",") == [f"factledger.{n}" for n in names]
