"""The package installs as one `factledger` namespace with a subpackage per layer."""

import importlib

import pytest


@pytest.mark.parametrize(
    "layer", ["domain", "application", "adapters", "projections", "api", "client", "testing"]
)
def test_each_layer_imports_under_the_factledger_namespace(layer: str) -> None:
    module = importlib.import_module(f"factledger.{layer}")
    assert module.__name__ == f"factledger.{layer}"


def test_no_generic_top_level_package_is_importable() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("domain.transcript")
