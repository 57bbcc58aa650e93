"""Fixtures shared by every test layer."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresLocation]:
    """One embedded PostgreSQL 18 + pgvector for the whole run; tests create their own databases
    or schemas when they need isolation from each other."""
    server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="factledger-pg-")), delete_on_stop=True)
    try:
        yield server.location
    finally:
        server.stop()
