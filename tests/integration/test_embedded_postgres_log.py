"""The embedded PostgreSQL writes no statement, parameter or failed value to its own log."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest
from support.canaries import CANARY_BODY, hits

from factledger.adapters.postgres_server import QUIET_LOG_SETTINGS, PostgresLocation

pytestmark = pytest.mark.integration

FAILING = [
    # A unique violation: its DETAIL line quotes the key.
    ("INSERT INTO canary_log VALUES (%s)", [CANARY_BODY]),
    # A bad value: the ERROR line itself quotes it.
    ("SELECT %s::int", [CANARY_BODY]),
    ("SELECT %s::jsonb", [f"{{{CANARY_BODY}"]),
    # A statement whose text carries the value (the STATEMENT line).
    (f"SELECT * FROM missing_table WHERE note = '{CANARY_BODY}'", None),  # noqa: S608 - a constant
]


def server_log(conn: psycopg.Connection[tuple[object, ...]]) -> Path:
    row = conn.execute("SELECT current_setting('data_directory')").fetchone()
    assert row is not None
    return Path(str(row[0])) / "log"


def test_failing_statements_leave_no_value_in_the_server_log(postgres: PostgresLocation) -> None:
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        log = server_log(conn)
        for name, value in QUIET_LOG_SETTINGS.items():
            row = conn.execute("SELECT current_setting(%s)", [name]).fetchone()
            assert row is not None
            assert row[0] == value, name
        conn.execute("CREATE TABLE IF NOT EXISTS canary_log (note text PRIMARY KEY)")
        conn.execute("INSERT INTO canary_log VALUES (%s) ON CONFLICT DO NOTHING", [CANARY_BODY])
        for statement, params in FAILING:
            with pytest.raises(psycopg.Error):
                conn.execute(statement, params)  # type: ignore[arg-type]
        conn.execute("DROP TABLE canary_log")
    time.sleep(0.2)  # the server's logging collector writes asynchronously
    assert hits(log.read_text(errors="replace")) == []
