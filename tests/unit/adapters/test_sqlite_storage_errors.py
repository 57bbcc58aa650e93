"""A SQLite store on a full or read-only disk raises `StorageFullError` or
`StorageReadOnlyError` (both 503s), not a generic "unavailable" and never a `sqlite3` error.

`PRAGMA max_page_count` makes SQLite answer SQLITE_FULL exactly as a full disk does, and
`PRAGMA query_only` makes it answer SQLITE_READONLY, without a file system of a given size.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import pytest

from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.api.http.errors import STORAGE_RETRY_AFTER_S, render
from factledger.application.errors import StorageFullError, StorageReadOnlyError
from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.sessions.types import ActiveSession, SessionId, SessionKey
from factledger.domain.transcript import Channel, Message, Role

SUBJECT = uuid4()
BIG = "x" * 4000  # larger than a page: each write needs new pages


def no_room(conn: sqlite3.Connection) -> None:
    """The file may not grow past its current size: the next new page is SQLITE_FULL."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def write_views(views: SqliteViewStore, *, count: int) -> None:
    with views.transaction() as txn:
        for index in range(count):
            txn.put("profile", f"subject-{index}", {"text": BIG})
        txn.advance(1)


async def append_many(buffer: SqliteSessionBuffer, *, count: int) -> None:
    for _ in range(count):
        await buffer.append(SessionKey(SUBJECT, SessionId("s-1")), Message(Role.SUBJECT, BIG))


def test_the_view_store_reports_a_full_disk(tmp_path: Path) -> None:
    views = SqliteViewStore(tmp_path / "views.sqlite", "profile")
    no_room(views._conn)
    with pytest.raises(StorageFullError) as raised:
        write_views(views, count=50)
    assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
    # Nothing half-written: the position did not move and the store still serves.
    assert views.position() == 0
    with views.read() as txn:
        assert txn.get("profile", "subject-0") is None
    views.close()


def test_the_view_store_reports_a_read_only_file(tmp_path: Path) -> None:
    views = SqliteViewStore(tmp_path / "views.sqlite", "profile")
    views._conn.execute("PRAGMA query_only = 1")
    with pytest.raises(StorageReadOnlyError):
        write_views(views, count=1)
    views.close()


def test_the_key_store_reports_a_full_disk_and_a_read_only_file(tmp_path: Path) -> None:
    keys = SqliteKeyStore(tmp_path / "keys.sqlite")
    keys.current("subject-0")
    no_room(keys._conn)
    with pytest.raises(StorageFullError):
        [keys.current(f"subject-{index}") for index in range(500)]
    keys._conn.execute("PRAGMA query_only = 1")
    with pytest.raises(StorageReadOnlyError):
        keys.current("subject-new")
    # Reads still work: keys already written stay readable.
    assert keys.current("subject-0")[1]
    keys.close()


def test_the_session_buffer_and_idempotency_store_report_a_full_disk(tmp_path: Path) -> None:
    async def scenario() -> None:
        buffer = SqliteSessionBuffer(tmp_path / "buffer.sqlite")
        session = ActiveSession(
            session_id=SessionId("s-1"),
            subject_id=SUBJECT,
            channel=Channel.VOICE,
            started_at=datetime(2026, 1, 1, tzinfo=UTC),
            message_count=0,
            withheld=0,
        )
        await buffer.open(session)
        no_room(buffer._db.conn)
        with pytest.raises(StorageFullError):
            await append_many(buffer, count=50)
        buffer.close()

        store = SqliteIdempotencyStore(tmp_path / "idempotency.sqlite")
        store._db.conn.execute("PRAGMA query_only = 1")
        with pytest.raises(StorageReadOnlyError):
            await store.claim(IdempotencyScope("t1", "agent-1", SUBJECT, "key-1"), "fingerprint")
        store.close()

    asyncio.run(scenario())


def test_the_api_answers_storage_errors_with_503_naming_them() -> None:
    response = render(StorageFullError("sqlite view store failed: StorageFullError"))
    assert response.status_code == 503
    assert json.loads(response.body)["error"] == "StorageFullError"
    assert response.headers["Retry-After"] == str(STORAGE_RETRY_AFTER_S)
    assert render(StorageReadOnlyError("read only")).status_code == 503
