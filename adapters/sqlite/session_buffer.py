"""`SessionBuffer` in a SQLite file beside the event store (the embedded default).

sqlite3 blocks, so every call runs in a worker thread; one connection, serialised by a lock,
is plenty for the per-turn writes of a single node.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar
from uuid import UUID

from factledger.adapters.sqlite.connection import SqliteWriter
from factledger.application.sessions.types import (
    ActiveSession,
    SessionBufferUnavailableError,
    SessionId,
    SessionNotActiveError,
)
from factledger.domain.errors import SessionConflictError
from factledger.domain.transcript import Channel, Message, Role

T = TypeVar("T")

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS short_term_sessions (
        session_id TEXT PRIMARY KEY, subject_id TEXT NOT NULL, channel TEXT NOT NULL,
        started_at TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
        withheld INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS short_term_messages (
        session_id TEXT NOT NULL, idx INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,
        at TEXT, PRIMARY KEY (session_id, idx))""",
)
# Message ids make a retried append a no-op; tables made without them gain the column.
_MESSAGE_ID_INDEX = """CREATE UNIQUE INDEX IF NOT EXISTS short_term_message_ids
    ON short_term_messages (session_id, message_id)"""
_SESSION_COLUMNS = "session_id, subject_id, channel, started_at, message_count, withheld"


def _session_from_row(row: tuple[str, str, str, str, int, int]) -> ActiveSession:
    return ActiveSession(
        session_id=SessionId(row[0]),
        subject_id=UUID(row[1]),
        channel=Channel(row[2]),
        started_at=datetime.fromisoformat(row[3]),
        message_count=row[4],
        withheld=row[5],
    )


def _migrate(conn: sqlite3.Connection) -> None:
    for statement in _SCHEMA:
        conn.execute(statement)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(short_term_messages)")}
    if "message_id" not in columns:  # tables made before appends carried ids
        conn.execute("ALTER TABLE short_term_messages ADD COLUMN message_id TEXT")
    conn.execute(_MESSAGE_ID_INDEX)


class SqliteSessionBuffer:
    """Active sessions in two tables of a SQLite file (`:memory:` works too)."""

    def __init__(self, path: Path | str) -> None:
        self._db = SqliteWriter(
            path, error=lambda: SessionBufferUnavailableError("sqlite session buffer failed")
        )
        self._db.run_sync(_migrate)

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.run(work)

    async def open(self, session: ActiveSession) -> ActiveSession:
        """Opens the session, or returns the one already open with the same parameters."""

        def work(conn: sqlite3.Connection) -> ActiveSession:
            conn.execute(
                "INSERT OR IGNORE INTO short_term_sessions (session_id, subject_id, channel,"
                " started_at) VALUES (?, ?, ?, ?)",
                (
                    session.session_id,
                    str(session.subject_id),
                    session.channel.value,
                    session.started_at.isoformat(),
                ),
            )
            stored = _fetch(conn, session.session_id)
            assert stored is not None  # noqa: S101 - inserted or present in this transaction
            if (stored.subject_id, stored.channel) != (session.subject_id, session.channel):
                raise SessionConflictError(
                    f"session {session.session_id}: open for another subject or channel"
                )
            return stored

        return await self._run(work)

    async def get(self, session_id: SessionId) -> ActiveSession | None:
        """The open session, or None."""
        return await self._run(lambda conn: _fetch(conn, session_id))

    async def append(
        self, session_id: SessionId, message: Message, *, message_id: str | None = None
    ) -> int:
        """Appends a message and returns its index (the session row's counter); a known
        message id returns the first append's index (`BEGIN IMMEDIATE` serialises twins)."""

        def work(conn: sqlite3.Connection) -> int:
            if message_id is not None:
                seen = conn.execute(
                    "SELECT idx FROM short_term_messages WHERE session_id = ? AND message_id = ?",
                    (session_id, message_id),
                ).fetchone()
                if seen is not None:
                    return int(seen[0])
            row = conn.execute(
                "UPDATE short_term_sessions SET message_count = message_count + 1"
                " WHERE session_id = ? RETURNING message_count",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotActiveError(session_id)
            index = int(row[0]) - 1
            conn.execute(
                "INSERT INTO short_term_messages (session_id, idx, role, text, at, message_id)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    index,
                    message.role.value,
                    message.text,
                    None if message.at is None else message.at.isoformat(),
                    message_id,
                ),
            )
            return index

        return await self._run(work)

    async def withhold(self, session_id: SessionId) -> int:
        """Counts one withheld message and returns the new count."""

        def work(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "UPDATE short_term_sessions SET withheld = withheld + 1"
                " WHERE session_id = ? RETURNING withheld",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotActiveError(session_id)
            return int(row[0])

        return await self._run(work)

    async def messages(self, session_id: SessionId, *, last: int | None = None) -> list[Message]:
        """The kept messages, oldest first."""

        def work(conn: sqlite3.Connection) -> list[Message]:
            if _fetch(conn, session_id) is None:
                raise SessionNotActiveError(session_id)
            rows = conn.execute(
                "SELECT role, text, at FROM short_term_messages WHERE session_id = ?"
                " ORDER BY idx DESC LIMIT ?",
                (session_id, -1 if last is None else max(last, 0)),
            ).fetchall()
            return [
                Message(Role(role), text, None if at is None else datetime.fromisoformat(at))
                for role, text, at in reversed(rows)
            ]

        return await self._run(work)

    async def discard(self, session_id: SessionId) -> None:
        """Forgets the session and its messages; a no-op when it is not open."""

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM short_term_messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM short_term_sessions WHERE session_id = ?", (session_id,))

        await self._run(work)

    def close(self) -> None:
        """Closes the connection."""
        self._db.close()


def _fetch(conn: sqlite3.Connection, session_id: str) -> ActiveSession | None:
    row = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM short_term_sessions WHERE session_id = ?",  # noqa: S608
        (session_id,),
    ).fetchone()
    return None if row is None else _session_from_row(row)
