"""`SqliteSessionBuffer` beyond the port's contract (see tests/contracts): schema migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer


def test_a_sqlite_buffer_from_before_message_ids_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE short_term_messages (session_id TEXT NOT NULL, idx INTEGER NOT NULL,"
            " role TEXT NOT NULL, text TEXT NOT NULL, at TEXT, PRIMARY KEY (session_id, idx))"
        )
    SqliteSessionBuffer(path).close()
    with sqlite3.connect(path) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(short_term_messages)")}
    assert "message_id" in columns
