"""The embedded PostgreSQL starts with its start settings (ADR 0052): shared_buffers sized for
a store of ~100,000 facts, applied from the first start and kept across restarts."""

from __future__ import annotations

import tempfile
from pathlib import Path

import psycopg
import pytest

from factledger.adapters.postgres_server import (
    EMBEDDED_START_SETTINGS,
    EmbeddedPostgres,
    PostgresLocation,
    write_start_settings,
)

pytestmark = pytest.mark.integration


def _setting(location: PostgresLocation, name: str) -> str:
    with psycopg.connect(location.conninfo, autocommit=True) as conn:
        row = conn.execute("SELECT current_setting(%s)", [name]).fetchone()
    assert row is not None
    return str(row[0])


def test_the_session_server_runs_with_the_start_settings(postgres: PostgresLocation) -> None:
    for name, value in EMBEDDED_START_SETTINGS.items():
        assert _setting(postgres, name) == value


def test_the_settings_file_is_included_once_however_often_it_is_written() -> None:
    pgdata = Path(tempfile.mkdtemp(prefix="factledger-conf-"))
    (pgdata / "postgresql.conf").write_text("max_connections = 100")  # no final newline
    write_start_settings(pgdata)
    write_start_settings(pgdata)
    conf = (pgdata / "postgresql.conf").read_text()
    assert conf.count("include_if_exists = 'factledger.conf'") == 1
    assert conf.startswith("max_connections = 100\n")
    assert "shared_buffers = '512MB'" in (pgdata / "factledger.conf").read_text()


def test_a_restarted_server_keeps_the_start_settings() -> None:
    data = Path(tempfile.mkdtemp(prefix="factledger-pg-restart-"))
    server = EmbeddedPostgres(data, delete_on_stop=False)
    server.stop()
    again = EmbeddedPostgres(data, delete_on_stop=True)
    try:
        assert (
            _setting(again.location, "shared_buffers") == EMBEDDED_START_SETTINGS["shared_buffers"]
        )
    finally:
        again.stop()
