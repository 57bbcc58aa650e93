"""`SessionBuffer` in a SQLite file beside the event store (the embedded default).

sqlite3 blocks, so every call runs in a worker thread; one connection, serialised by a lock,
is plenty for the per-turn writes of a single node.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar
from uuid import UUID

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import SqliteWriter
from factledger.application.sessions.types import (
    ActiveSession,
    SessionBufferUnavailableError,
    SessionId,
    SessionKey,
    SessionNotActiveError,
)
from factledger.domain.errors import SessionConflictError
from factledger.domain.sessions import MAX_MESSAGES, session_full
from factledger.domain.transcript import Channel, Message, MessageDecision, Role

T = TypeVar("T")

# Session ids are unique per subject only: every key and index leads with the subject.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS short_term_sessions (
        subject_id TEXT NOT NULL, session_id TEXT NOT NULL, channel TEXT NOT NULL,
        started_at TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
        withheld INTEGER NOT NULL DEFAULT 0, conversation_type TEXT,
        PRIMARY KEY (subject_id, session_id))""",
    """CREATE TABLE IF NOT EXISTS short_term_messages (
        subject_id TEXT NOT NULL, session_id TEXT NOT NULL, idx INTEGER NOT NULL,
        role TEXT NOT NULL, text TEXT NOT NULL, at TEXT, message_id TEXT, decides TEXT,
        PRIMARY KEY (subject_id, session_id, idx))""",
    # Message ids make a retried append a no-op.
    """CREATE UNIQUE INDEX IF NOT EXISTS short_term_message_keys
        ON short_term_messages (subject_id, session_id, message_id)""",
)
_SESSION_COLUMNS = "session_id, subject_id, channel, started_at, message_count, withheld"
# Read with the columns above; tables made before sessions had a type gain it in `MIGRATIONS`.
_READ_COLUMNS = f"{_SESSION_COLUMNS}, conversation_type"
_KEY = "subject_id = ? AND session_id = ?"


def _session_from_row(row: tuple[str, str, str, str, int, int, str | None]) -> ActiveSession:
    return ActiveSession(
        session_id=SessionId(row[0]),
        subject_id=UUID(row[1]),
        channel=Channel(row[2]),
        started_at=datetime.fromisoformat(row[3]),
        message_count=row[4],
        withheld=row[5],
        conversation_type=row[6],
    )


def _ids(key: SessionKey) -> tuple[str, str]:
    return (str(key.subject_id), key.session_id)


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _tables_before_versioning(conn: sqlite3.Connection) -> None:
    """The tables as they stood before versioning, made from any older layout."""
    messages = _columns(conn, "short_term_messages")
    if messages and "subject_id" not in messages:
        _rekey_by_subject(conn, has_message_ids="message_id" in messages)
    for statement in _SCHEMA:
        conn.execute(statement)
    if "decides" not in _columns(conn, "short_term_messages"):
        # Tables made before a subject's message could confirm or decline a change.
        conn.execute("ALTER TABLE short_term_messages ADD COLUMN decides TEXT")
    if "conversation_type" not in _columns(conn, "short_term_sessions"):
        # Tables made before a session could name its conversation type.
        conn.execute("ALTER TABLE short_term_sessions ADD COLUMN conversation_type TEXT")


def _rekey_by_subject(conn: sqlite3.Connection, *, has_message_ids: bool) -> None:
    """Rebuilds tables keyed by session id alone (SQLite cannot change a primary key); a
    message whose session row is gone has no subject and is dropped with its session."""
    conn.execute("DROP INDEX IF EXISTS short_term_message_ids")
    conn.execute("ALTER TABLE short_term_messages RENAME TO short_term_messages_unkeyed")
    if not _columns(conn, "short_term_sessions"):
        conn.execute(f"CREATE TABLE short_term_sessions ({_SESSION_COLUMNS})")
    conn.execute("ALTER TABLE short_term_sessions RENAME TO short_term_sessions_unkeyed")
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.execute(
        f"INSERT INTO short_term_sessions ({_SESSION_COLUMNS})"  # noqa: S608
        f" SELECT {_SESSION_COLUMNS} FROM short_term_sessions_unkeyed"
        " WHERE subject_id IS NOT NULL"
    )
    message_id = "m.message_id" if has_message_ids else "NULL"
    conn.execute(
        "INSERT INTO short_term_messages"  # noqa: S608
        " (subject_id, session_id, idx, role, text, at, message_id)"
        f" SELECT s.subject_id, m.session_id, m.idx, m.role, m.text, m.at, {message_id}"
        " FROM short_term_messages_unkeyed m JOIN short_term_sessions_unkeyed s"
        " ON s.session_id = m.session_id WHERE s.subject_id IS NOT NULL"
    )
    conn.execute("DROP TABLE short_term_messages_unkeyed")
    conn.execute("DROP TABLE short_term_sessions_unkeyed")


# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", (_tables_before_versioning,)),)


class SqliteSessionBuffer:
    """Active sessions in two tables of a SQLite file (`:memory:` works too)."""

    def __init__(self, path: Path | str, *, max_messages: int = MAX_MESSAGES) -> None:
        self._max_messages = max_messages
        self._db = SqliteWriter(
            path, error=lambda: SessionBufferUnavailableError("sqlite session buffer failed")
        )
        # Deleted messages are overwritten, not left in free pages (erasure).
        self._db.read("PRAGMA secure_delete=ON", ())
        self._db.migrate("session_buffer", MIGRATIONS)

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.run(work)

    async def open(self, session: ActiveSession) -> ActiveSession:
        """Opens the session, or returns the one already open with the same parameters."""

        def work(conn: sqlite3.Connection) -> ActiveSession:
            conn.execute(
                "INSERT OR IGNORE INTO short_term_sessions (subject_id, session_id, channel,"
                " started_at, conversation_type) VALUES (?, ?, ?, ?, ?)",
                (
                    *_ids(session.key),
                    session.channel.value,
                    session.started_at.isoformat(),
                    session.conversation_type,
                ),
            )
            stored = _fetch(conn, session.key)
            assert stored is not None  # noqa: S101 - inserted or present in this transaction
            if stored.channel != session.channel:
                raise SessionConflictError(f"session {session.session_id}: open on another channel")
            if stored.conversation_type != session.conversation_type:
                raise SessionConflictError(
                    f"session {session.session_id}: open with another conversation type"
                )
            return stored

        return await self._run(work)

    async def get(self, key: SessionKey) -> ActiveSession | None:
        """The open session, or None."""
        return await self._run(lambda conn: _fetch(conn, key))

    async def append(
        self, key: SessionKey, message: Message, *, message_id: str | None = None
    ) -> int:
        """Appends a message and returns its index (the session row's counter); a known
        message id returns the first append's index (`BEGIN IMMEDIATE` serialises twins).
        A session already holding `max_messages` raises `SessionFullError`."""

        def work(conn: sqlite3.Connection) -> int:
            if message_id is not None:
                seen = conn.execute(
                    f"SELECT idx FROM short_term_messages WHERE {_KEY} AND message_id = ?",  # noqa: S608
                    (*_ids(key), message_id),
                ).fetchone()
                if seen is not None:
                    return int(seen[0])
            row = conn.execute(
                "UPDATE short_term_sessions SET message_count = message_count + 1"  # noqa: S608
                f" WHERE {_KEY} AND message_count < ? RETURNING message_count",
                (*_ids(key), self._max_messages),
            ).fetchone()
            if row is None:
                if _fetch(conn, key) is None:
                    raise SessionNotActiveError(key.session_id)
                raise session_full(key.session_id, self._max_messages)
            index = int(row[0]) - 1
            conn.execute(
                "INSERT INTO short_term_messages"
                " (subject_id, session_id, idx, role, text, at, message_id, decides)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *_ids(key),
                    index,
                    message.role.value,
                    message.text,
                    None if message.at is None else message.at.isoformat(),
                    message_id,
                    None if message.decides is None else message.decides.encode(),
                ),
            )
            return index

        return await self._run(work)

    async def withhold(self, key: SessionKey) -> int:
        """Counts one withheld message and returns the new count."""

        def work(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "UPDATE short_term_sessions SET withheld = withheld + 1"  # noqa: S608
                f" WHERE {_KEY} RETURNING withheld",
                _ids(key),
            ).fetchone()
            if row is None:
                raise SessionNotActiveError(key.session_id)
            return int(row[0])

        return await self._run(work)

    async def messages(self, key: SessionKey, *, last: int | None = None) -> list[Message]:
        """The kept messages, oldest first."""

        def work(conn: sqlite3.Connection) -> list[Message]:
            if _fetch(conn, key) is None:
                raise SessionNotActiveError(key.session_id)
            rows = conn.execute(
                f"SELECT role, text, at, decides FROM short_term_messages WHERE {_KEY}"  # noqa: S608
                " ORDER BY idx DESC LIMIT ?",
                (*_ids(key), -1 if last is None else max(last, 0)),
            ).fetchall()
            return [
                Message(
                    Role(role),
                    text,
                    None if at is None else datetime.fromisoformat(at),
                    MessageDecision.decode(decides),
                )
                for role, text, at, decides in reversed(rows)
            ]

        return await self._run(work)

    async def discard(self, key: SessionKey) -> None:
        """Forgets the session and its messages; a no-op when it is not open."""

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(f"DELETE FROM short_term_messages WHERE {_KEY}", _ids(key))  # noqa: S608
            conn.execute(f"DELETE FROM short_term_sessions WHERE {_KEY}", _ids(key))  # noqa: S608

        await self._run(work)

    async def discard_subject(self, subject_id: UUID) -> int:
        """Forgets every session of the subject, then checkpoints the write-ahead log into
        the file and truncates it: `secure_delete` zeroes the freed pages there, so neither
        file keeps the messages (a checkpoint that other readers hold back is retried by the
        next one; the WAL's pages are overwritten as it is reused)."""

        def work(conn: sqlite3.Connection) -> int:
            ids = (str(subject_id),)
            conn.execute("DELETE FROM short_term_messages WHERE subject_id = ?", ids)
            gone = conn.execute("DELETE FROM short_term_sessions WHERE subject_id = ?", ids)
            return gone.rowcount

        removed = await self._run(work)
        await asyncio.to_thread(self._db.read, "PRAGMA wal_checkpoint(TRUNCATE)", ())
        return removed

    def close(self) -> None:
        """Closes the connection."""
        self._db.close()


def _fetch(conn: sqlite3.Connection, key: SessionKey) -> ActiveSession | None:
    row = conn.execute(
        f"SELECT {_READ_COLUMNS} FROM short_term_sessions WHERE {_KEY}",  # noqa: S608
        _ids(key),
    ).fetchone()
    return None if row is None else _session_from_row(row)
