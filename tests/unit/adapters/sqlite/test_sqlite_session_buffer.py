"""`SqliteSessionBuffer` beyond the port's contract (see tests/contracts): schema migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import UUID

from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.domain.transcript import Message, Role

SUBJECT_A = UUID("00000000-0000-0000-0000-00000000000a")
SUBJECT_B = UUID("00000000-0000-0000-0000-00000000000b")
# The tables as they were when a session id named one session across every subject.
_UNKEYED_SESSIONS = """CREATE TABLE short_term_sessions (
    session_id TEXT PRIMARY KEY, subject_id TEXT NOT NULL, channel TEXT NOT NULL,
    started_at TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
    withheld INTEGER NOT NULL DEFAULT 0)"""
_UNKEYED_MESSAGES = """CREATE TABLE short_term_messages (
    session_id TEXT NOT NULL, idx INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,
    at TEXT, message_id TEXT, PRIMARY KEY (session_id, idx))"""


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
    assert {"message_id", "subject_id"} <= columns


async def test_a_buffer_keyed_by_session_id_alone_is_rekeyed_by_subject(tmp_path: Path) -> None:
    # Given an open session of subject A in tables keyed by session id alone
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(_UNKEYED_SESSIONS)
        conn.execute(_UNKEYED_MESSAGES)
        conn.execute(
            "INSERT INTO short_term_sessions VALUES (?, ?, 'voice', ?, 1, 0)",
            ("s-1", str(SUBJECT_A), "2026-03-12T10:00:00+00:00"),
        )
        conn.execute(
            "INSERT INTO short_term_messages VALUES ('s-1', 0, 'subject', 'kept', NULL, 'm-1')"
        )
    # When the buffer opens it
    buffer = SqliteSessionBuffer(path)
    try:
        # Then A's session and its message ids are kept, and B may use the same id
        a1 = SessionKey(SUBJECT_A, SessionId("s-1"))
        assert [m.text for m in await buffer.messages(a1)] == ["kept"]
        assert await buffer.append(a1, Message(Role.SUBJECT, "kept"), message_id="m-1") == 0
        b1 = SessionKey(SUBJECT_B, SessionId("s-1"))
        assert await buffer.get(b1) is None
    finally:
        buffer.close()


async def test_a_buffer_from_before_conversation_types_keeps_its_sessions_untyped(
    tmp_path: Path,
) -> None:
    # Given an open session in tables made before sessions named a conversation type
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            """CREATE TABLE short_term_sessions (subject_id TEXT NOT NULL,
            session_id TEXT NOT NULL, channel TEXT NOT NULL, started_at TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0, withheld INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (subject_id, session_id))"""
        )
        conn.execute(
            "INSERT INTO short_term_sessions VALUES (?, 's-1', 'chat', ?, 0, 0)",
            (str(SUBJECT_A), "2026-03-12T10:00:00+00:00"),
        )
    # When the buffer opens it, then the column is added and the session reads as untyped
    buffer = SqliteSessionBuffer(path)
    try:
        stored = await buffer.get(SessionKey(SUBJECT_A, SessionId("s-1")))
        assert stored is not None
        assert stored.conversation_type is None
    finally:
        buffer.close()
