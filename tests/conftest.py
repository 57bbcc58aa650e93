"""Fixtures shared by every test layer."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.crash import CrashablePostgres

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


@pytest.fixture
def server_dir() -> Iterator[Path]:
    """A data folder for a test's own embedded server. Run as root, the server runs as another
    user and needs every folder above its data to be traversable; pytest's `tmp_path` lives under
    a folder each new pytest session makes private again, which breaks a server another session
    is starting at the same moment."""
    folder = Path(tempfile.mkdtemp(prefix="factledger-test-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def crashable(server_dir: Path) -> Iterator[CrashablePostgres]:
    """A server of the test's own that it may kill and restart (`support.crash`)."""
    server = CrashablePostgres(server_dir / "pg")
    try:
        yield server
    finally:
        server.stop()
