"""Versioned migrations of the SQLite stores (yoyo): applied once, recorded in the file, a
later migration applied alone, a database made before versioning adopted in place, and a
lock that a killed process does not leave behind."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.migrations import LOCK_SUFFIX, migrate, recorded
from factledger.adapters.sqlite.view_store import MIGRATIONS as VIEW_MIGRATIONS
from factledger.adapters.sqlite.view_store import SqliteViewStore

FIRST = StoreMigration("0001-tables", ("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",))
SECOND = StoreMigration("0002-author", ("ALTER TABLE notes ADD COLUMN author TEXT",))


def connect(path: Path | str) -> sqlite3.Connection:
    return sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def test_a_migration_applied_twice_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    conn = connect(path)
    assert migrate(conn, path, "notes", [FIRST]) == ["0001-tables"]
    conn.execute("INSERT INTO notes (body) VALUES ('kept')")
    # A plain CREATE TABLE run again would fail: the second run applies nothing.
    assert migrate(conn, path, "notes", [FIRST]) == []
    assert migrate(connect(path), path, "notes", [FIRST]) == []
    assert conn.execute("SELECT body FROM notes").fetchall() == [("kept",)]
    assert recorded(conn, path, "notes") == ["0001-tables"]


def test_a_later_migration_is_applied_alone_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    conn = connect(path)
    migrate(conn, path, "notes", [FIRST])
    conn.execute("INSERT INTO notes (body) VALUES ('before')")
    assert migrate(conn, path, "notes", [FIRST, SECOND]) == ["0002-author"]
    assert columns(conn, "notes") == ["id", "body", "author"]
    assert conn.execute("SELECT body, author FROM notes").fetchall() == [("before", None)]
    assert recorded(conn, path, "notes") == ["0001-tables", "0002-author"]


def test_stores_in_one_file_keep_their_own_records(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    conn = connect(path)
    other = StoreMigration("0001-tables", ("CREATE TABLE tags (name TEXT)",))
    assert migrate(conn, path, "notes", [FIRST]) == ["0001-tables"]
    assert migrate(conn, path, "tags", [other]) == ["0001-tables"]
    assert recorded(conn, path, "notes") == recorded(conn, path, "tags") == ["0001-tables"]


def test_a_failed_migration_leaves_nothing_behind_and_is_tried_again(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    conn = connect(path)
    broken = StoreMigration(
        "0001-tables", ("CREATE TABLE notes (id INTEGER PRIMARY KEY)", "NOT SQL AT ALL")
    )
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, path, "notes", [broken])
    assert columns(conn, "notes") == []  # one transaction: the table went with the failure
    assert recorded(conn, path, "notes") == []
    assert migrate(conn, path, "notes", [FIRST]) == ["0001-tables"]


def test_an_in_memory_database_migrates_on_its_own_connection() -> None:
    conn = connect(":memory:")
    assert migrate(conn, ":memory:", "notes", [FIRST, SECOND]) == ["0001-tables", "0002-author"]
    assert columns(conn, "notes") == ["id", "body", "author"]


def test_a_view_store_made_before_versioning_is_adopted_in_place(tmp_path: Path) -> None:
    path = tmp_path / "views.sqlite"
    old = connect(path)
    # The tables as the store made them before its migrations were versioned, with a view.
    old.executescript(
        """CREATE TABLE view_documents (projection TEXT NOT NULL, view TEXT NOT NULL,
        key TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (projection, view, key));
        CREATE TABLE view_tracking (projection TEXT PRIMARY KEY, position INTEGER NOT NULL);
        INSERT INTO view_documents VALUES ('profiles', 'subject', 'k1', '{"a": 1}');
        INSERT INTO view_tracking VALUES ('profiles', 7);"""
    )
    old.close()
    store = SqliteViewStore(path, "profiles")
    try:
        assert store.position() == 7
        with store.read() as txn:
            assert txn.get("subject", "k1") == {"a": 1}
    finally:
        store.close()
    conn = connect(path)
    assert recorded(conn, path, "views") == [m.id for m in VIEW_MIGRATIONS]
    assert migrate(conn, path, "views", VIEW_MIGRATIONS) == []


def test_a_lock_held_by_a_killed_process_is_not_left_behind(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    holder = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            f"handle = open({str(path) + LOCK_SUFFIX!r}, 'a')\n"
            "fcntl.flock(handle, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        # The system released the killed holder's lock: this start migrates.
        assert migrate(connect(path), path, "notes", [FIRST]) == ["0001-tables"]
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
