"""Fixtures shared by every test layer."""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings
from support.crash import CrashablePostgres

from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation

# A failing property prints the example that failed and a `@reproduce_failure` blob for it.
settings.register_profile("factledger", print_blob=True)
settings.load_profile("factledger")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Every run draws its Hypothesis seed here unless given one, so the header can name it:
    `--hypothesis-seed=N` replays a run's examples, whatever the machine (runs stay random)."""
    if config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = str(secrets.randbelow(2**32))


def pytest_report_header(config: pytest.Config) -> str:
    seed = config.getoption("hypothesis_seed")
    return f"hypothesis seed: {seed} (replay with --hypothesis-seed={seed})"


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresLocation]:
    """One embedded PostgreSQL 18 + pgvector for the whole run; tests create their own databases
    or schemas when they need isolation from each other."""
    server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="factledger-pg-")), delete_on_stop=True)
    # Its data is deleted at the end, so nothing needs to reach the disk: without fsync its
    # stop no longer writes out every database the tests made (16-38 s for 40 of them, loaded).
    # The servers that crash tests kill are their own (`crashable`), and keep fsync.
    with psycopg.connect(server.location.conninfo, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("SELECT pg_reload_conf()")
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
