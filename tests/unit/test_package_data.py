"""The data files the code reads at run time (the tokenizer, the calibration tables, the
extraction guidance, the console's templates and static files) ship in the wheel, the build
says nothing about undeclared packages, every package folder is declared (setuptools leaves an
undeclared one out of the wheel without a word), and the installed package finds each of
them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from factledger.adapters.embedding.onnx.calibration_tables import OWN_PAIRS, PACKAGED_TABLES
from factledger.adapters.embedding.onnx.model_files import TOKENIZER
from factledger.api.console.pages import STATIC_DIR, TEMPLATES

REPOSITORY = Path(__file__).resolve().parents[2]
LAYERS = (
    "domain",
    "application",
    "adapters",
    "projections",
    "api",
    "client",
    "integrations",
    "testing",
    "bench",
)
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")

# Each printed path is where the installed package's own code looks for the file.
LOCATE = """
import json
from importlib.resources import files
from factledger.adapters.embedding.onnx import calibration_tables, model_files
from factledger.adapters.extraction.rules import guidance
from factledger.api.console import pages
print(json.dumps({
    "module": model_files.__file__,
    "tokenizer": str(model_files.TOKENIZER),
    "tables": str(calibration_tables.PACKAGED_TABLES),
    "own pairs": str(calibration_tables.OWN_PAIRS),
    "guidance": str(files(guidance.__package__).joinpath(guidance.DEFAULT_GUIDANCE)),
    "templates": [str(pages.TEMPLATES.env.loader.searchpath[0]) + "/" + name
                  for name in pages.TEMPLATES.env.list_templates()],
    "static": [str(p) for p in sorted(pages.STATIC_DIR.iterdir())],
}))
"""


def test_every_package_folder_is_declared() -> None:
    config = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    found = {
        ".".join([package, *init.parent.relative_to(REPOSITORY / folder).parts])
        for package, folder in setuptools["package-dir"].items()
        for init in (REPOSITORY / folder).rglob("__init__.py")
    }

    assert found - set(setuptools["packages"]) == set()


def test_the_source_tree_has_each_file_the_code_reads() -> None:
    assert TOKENIZER.is_file()
    assert PACKAGED_TABLES.is_file()
    assert OWN_PAIRS.is_file()
    assert "base.html" in TEMPLATES.env.list_templates()
    assert (STATIC_DIR / "console.css").is_file()


def test_every_package_of_the_source_tree_is_declared() -> None:
    # setuptools builds a wheel without an undeclared package, silently: the installed
    # product then fails on its first import of it, while an editable install works.
    declared = set(
        tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(("factledger", layer, *init.parent.relative_to(REPOSITORY / layer).parts))
        for layer in LAYERS
        for init in (REPOSITORY / layer).rglob("__init__.py")
    }
    assert sorted(found - declared) == []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A wheel built from a copy of the sources (the build writes beside them), and the log."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPOSITORY / name, source / name)
    for layer in LAYERS:
        shutil.copytree(REPOSITORY / layer, source / layer, ignore=IGNORED)
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(  # noqa: S603 - this interpreter's pip, our own sources
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    [path] = out.glob("factledger-*.whl")
    return path, built.stdout + built.stderr


@pytest.mark.slow
def test_building_warns_of_no_undeclared_package(wheel: tuple[Path, str]) -> None:
    _, log = wheel
    assert "is absent from the `packages` configuration" not in log
    assert "BuildBackendWarning" not in log


@pytest.mark.slow
def test_the_installed_package_finds_each_data_file(
    wheel: tuple[Path, str], tmp_path: Path
) -> None:
    path, _ = wheel
    target = tmp_path / "site"
    subprocess.run(  # noqa: S603 - this interpreter's pip, the wheel just built
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target",
         str(target), str(path)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    located = subprocess.run(  # noqa: S603 - this interpreter, our own code
        [sys.executable, "-c", textwrap.dedent(LOCATE)],
        capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": ""},
    )  # fmt: skip
    found = json.loads(located.stdout)

    # The wheel's copy answers, not the source tree this test runs from.
    assert Path(found.pop("module")).is_relative_to(target)
    templates, static = found.pop("templates"), found.pop("static")
    assert {"base.html", "error.html", "queue.html"} <= {Path(t).name for t in templates}
    assert {"console.css", "sign-in.js"} <= {Path(s).name for s in static}
    for file in [*found.values(), *templates, *static]:
        assert Path(file).is_relative_to(target), file
        assert Path(file).is_file(), file
