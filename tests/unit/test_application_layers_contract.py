"""The contract that keeps the application's packages one-way names every one of them: a
package or module left out of it could import any other, both ways, unchecked."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "application packages import one way"


def contract_members() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == CONTRACT]
    return {name.strip() for layer in contract["layers"] for name in layer.split("|")}


def application_members() -> set[str]:
    folder = ROOT / "application"
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    return {f"factledger.application.{name}" for name in packages | modules}


def test_every_application_package_and_module_is_in_the_one_way_contract() -> None:
    assert application_members() == contract_members()
