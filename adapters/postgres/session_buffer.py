"""`SessionBuffer` in PostgreSQL beside the event store (several API servers share it).

Indexes come from a counter on the session row, incremented under its row lock, so concurrent
appends to one session never collide.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg
from psycopg.errors import UniqueViolation

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.migrations import in_schema
from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
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

# Session ids are unique per subject only: every key and index leads with the subject.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS {schema}.short_term_sessions (
        subject_id uuid NOT NULL, session_id text NOT NULL, channel text NOT NULL,
        started_at timestamptz NOT NULL, message_count integer NOT NULL DEFAULT 0,
        withheld integer NOT NULL DEFAULT 0, PRIMARY KEY (subject_id, session_id))""",
    """CREATE TABLE IF NOT EXISTS {schema}.short_term_messages (
        subject_id uuid NOT NULL, session_id text NOT NULL, idx integer NOT NULL,
        role text NOT NULL, text text NOT NULL, at timestamptz, message_id text,
        PRIMARY KEY (subject_id, session_id, idx),
        FOREIGN KEY (subject_id, session_id)
            REFERENCES {schema}.short_term_sessions ON DELETE CASCADE)""",
    # Tables made before appends carried message ids gain the column (then rekeyed below).
    "ALTER TABLE {schema}.short_term_messages ADD COLUMN IF NOT EXISTS message_id text",
    # "confirms:<change id>" / "declines:<change id>" when the subject decides in the message.
    "ALTER TABLE {schema}.short_term_messages ADD COLUMN IF NOT EXISTS decides text",
    # Which extraction guidance the session gets; NULL: the default.
    "ALTER TABLE {schema}.short_term_sessions ADD COLUMN IF NOT EXISTS conversation_type text",
)
_UNKEYED = """SELECT 1 FROM information_schema.columns WHERE table_schema = %s
    AND table_name = 'short_term_sessions' AND column_name = 'session_id' AND NOT EXISTS (
        SELECT 1 FROM information_schema.columns WHERE table_schema = %s
        AND table_name = 'short_term_messages' AND column_name = 'subject_id')"""
# Tables keyed by session id alone gain the subject in every key; a message whose session
# row is gone has no subject and is dropped.
_REKEY = (
    "ALTER TABLE {schema}.short_term_messages"
    " DROP CONSTRAINT IF EXISTS short_term_messages_session_id_fkey",
    "DROP INDEX IF EXISTS {schema}.short_term_message_ids",
    "ALTER TABLE {schema}.short_term_messages ADD COLUMN subject_id uuid",
    """UPDATE {schema}.short_term_messages m SET subject_id = s.subject_id
        FROM {schema}.short_term_sessions s WHERE s.session_id = m.session_id""",
    "DELETE FROM {schema}.short_term_messages WHERE subject_id IS NULL",
    "ALTER TABLE {schema}.short_term_messages ALTER COLUMN subject_id SET NOT NULL",
    "ALTER TABLE {schema}.short_term_messages DROP CONSTRAINT short_term_messages_pkey",
    "ALTER TABLE {schema}.short_term_messages ADD PRIMARY KEY (subject_id, session_id, idx)",
    "ALTER TABLE {schema}.short_term_sessions DROP CONSTRAINT short_term_sessions_pkey",
    "ALTER TABLE {schema}.short_term_sessions ADD PRIMARY KEY (subject_id, session_id)",
    """ALTER TABLE {schema}.short_term_messages ADD FOREIGN KEY (subject_id, session_id)
        REFERENCES {schema}.short_term_sessions ON DELETE CASCADE""",
)
_MESSAGE_KEYS = """CREATE UNIQUE INDEX IF NOT EXISTS short_term_message_keys
    ON {schema}.short_term_messages (subject_id, session_id, message_id)"""
# One statement: take the next index if the session is open, has room and holds no message
# with this id (NULL ids never match), and insert the message under it. No row back: the
# caller takes the locking path to find out why.
_APPEND_ONE = """WITH bumped AS (
        UPDATE {schema}.short_term_sessions s SET message_count = s.message_count + 1
        WHERE s.subject_id = %s AND s.session_id = %s AND s.message_count < %s
        AND NOT EXISTS (SELECT 1 FROM {schema}.short_term_messages m
            WHERE m.subject_id = s.subject_id AND m.session_id = s.session_id
            AND m.message_id = %s)
        RETURNING s.message_count - 1 AS idx)
    INSERT INTO {schema}.short_term_messages
        (subject_id, session_id, idx, role, text, at, message_id, decides)
    SELECT %s, %s, idx, %s, %s, %s, %s, %s FROM bumped RETURNING idx"""


def _ids(key: SessionKey) -> tuple[UUID, str]:
    return (key.subject_id, key.session_id)


def _tables_before_versioning(conn: psycopg.Connection[Any], schema: str) -> None:
    """The tables as they stood before versioning; an older layout, keyed by session id
    alone, rekeyed by subject."""
    for statement in _SCHEMA:
        conn.execute(in_schema(statement, schema))
    if conn.execute(_UNKEYED, (schema, schema)).fetchone() is not None:
        for statement in _REKEY:
            conn.execute(in_schema(statement, schema))
    conn.execute(in_schema(_MESSAGE_KEYS, schema))


# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", (_tables_before_versioning,)),)


class PostgresSessionBuffer:
    """Active sessions in two tables of one schema; build it with `await ....connect(dsn)`."""

    def __init__(self, tables: PostgresTables, *, max_messages: int = MAX_MESSAGES) -> None:
        self._max_messages = max_messages
        self._tables = tables
        self._q, self._run = tables.q, tables.run

    @classmethod
    async def connect(
        cls,
        conninfo: str,
        *,
        schema: str = "public",
        pool: PoolOptions = DEFAULT_POOL,
        max_messages: int = MAX_MESSAGES,
    ) -> PostgresSessionBuffer:
        """Opens a pool and creates (or rekeys) the tables if needed."""
        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            pool=pool,
            error=lambda: SessionBufferUnavailableError("postgres session buffer failed"),
            store="session_buffer",
            migrations=MIGRATIONS,
        )
        return cls(tables, max_messages=max_messages)

    async def close(self) -> None:
        """Closes the pool."""
        await self._tables.close()

    async def _fetch(self, cur: Cursor, key: SessionKey) -> ActiveSession | None:
        await cur.execute(
            self._q(
                "SELECT session_id, subject_id, channel, started_at, message_count, withheld,"
                " conversation_type FROM {schema}.short_term_sessions WHERE "
                "subject_id = %s AND session_id = %s"
            ),
            _ids(key),
        )
        row = await cur.fetchone()
        if row is None:
            return None
        return ActiveSession(
            session_id=SessionId(row[0]),
            subject_id=row[1],
            channel=Channel(row[2]),
            started_at=row[3],
            message_count=row[4],
            withheld=row[5],
            conversation_type=row[6],
        )

    async def open(self, session: ActiveSession) -> ActiveSession:
        """Opens the session, or returns the one already open with the same parameters."""

        async def work(cur: Cursor) -> ActiveSession:
            await cur.execute(
                self._q(
                    "INSERT INTO {schema}.short_term_sessions (subject_id, session_id, channel,"
                    " started_at, conversation_type) VALUES (%s, %s, %s, %s, %s)"
                    " ON CONFLICT (subject_id, session_id) DO NOTHING"
                ),
                (
                    *_ids(session.key),
                    session.channel.value,
                    session.started_at,
                    session.conversation_type,
                ),
            )
            stored = await self._fetch(cur, session.key)
            if stored is None:  # discarded between the insert and the read: open it again
                raise SessionNotActiveError(session.session_id)
            if stored.channel != session.channel:
                raise SessionConflictError(f"session {session.session_id}: open on another channel")
            if stored.conversation_type != session.conversation_type:
                raise SessionConflictError(
                    f"session {session.session_id}: open with another conversation type"
                )
            return stored

        return await self._run(work)

    async def get(self, key: SessionKey) -> ActiveSession | None:
        """The open session, or None (one statement: no transaction around it)."""
        return await self._tables.run_single(lambda cur: self._fetch(cur, key))

    async def append(
        self, key: SessionKey, message: Message, *, message_id: str | None = None
    ) -> int:
        """Appends a message and returns its index (the first one's, for a known message id);
        a session already holding `max_messages` raises `SessionFullError`.

        The usual case (an open session with room, a new message id) is one statement in one
        round trip; anything else (a twin, a session not open or full, a twin
        racing this one to the unique index) takes the locking path, which tells them apart.
        """
        row = (*_ids(key), *self._message_row(message, message_id))

        async def quick(cur: Cursor) -> int | None:
            try:
                await cur.execute(
                    self._q(_APPEND_ONE), (*_ids(key), self._max_messages, message_id, *row)
                )
            except UniqueViolation:
                return None  # a twin with this message id got in first
            found = await cur.fetchone()
            return None if found is None else int(found[0])

        index = await self._tables.run_single(quick)
        if index is not None:
            return index
        return await self._run(lambda cur: self._append_locked(cur, key, message, message_id))

    @staticmethod
    def _message_row(message: Message, message_id: str | None) -> tuple[object, ...]:
        return (
            message.role.value,
            message.text,
            message.at,
            message_id,
            None if message.decides is None else message.decides.encode(),
        )

    async def _append_locked(
        self, cur: Cursor, key: SessionKey, message: Message, message_id: str | None
    ) -> int:
        if message_id is not None:
            # The session row's lock serialises twins: the second reads the first's row.
            await cur.execute(
                self._q(
                    "SELECT 1 FROM {schema}.short_term_sessions"
                    " WHERE subject_id = %s AND session_id = %s FOR UPDATE"
                ),
                _ids(key),
            )
            if await cur.fetchone() is None:
                raise SessionNotActiveError(key.session_id)
            await cur.execute(
                self._q(
                    "SELECT idx FROM {schema}.short_term_messages"
                    " WHERE subject_id = %s AND session_id = %s AND message_id = %s"
                ),
                (*_ids(key), message_id),
            )
            seen = await cur.fetchone()
            if seen is not None:
                return int(seen[0])
        await cur.execute(
            self._q(
                "UPDATE {schema}.short_term_sessions SET message_count = message_count + 1"
                " WHERE subject_id = %s AND session_id = %s AND message_count < %s"
                " RETURNING message_count"
            ),
            (*_ids(key), self._max_messages),
        )
        row = await cur.fetchone()
        if row is None:
            if await self._fetch(cur, key) is None:
                raise SessionNotActiveError(key.session_id)
            raise session_full(key.session_id, self._max_messages)
        index = int(row[0]) - 1
        await cur.execute(
            self._q(
                "INSERT INTO {schema}.short_term_messages"
                " (subject_id, session_id, idx, role, text, at, message_id, decides)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            ),
            (*_ids(key), index, *self._message_row(message, message_id)),
        )
        return index

    async def withhold(self, key: SessionKey) -> int:
        """Counts one withheld message and returns the new count."""

        async def work(cur: Cursor) -> int:
            await cur.execute(
                self._q(
                    "UPDATE {schema}.short_term_sessions SET withheld = withheld + 1"
                    " WHERE subject_id = %s AND session_id = %s RETURNING withheld"
                ),
                _ids(key),
            )
            row = await cur.fetchone()
            if row is None:
                raise SessionNotActiveError(key.session_id)
            return int(row[0])

        return await self._run(work)

    async def messages(self, key: SessionKey, *, last: int | None = None) -> list[Message]:
        """The kept messages, oldest first."""

        async def work(cur: Cursor) -> list[Message]:
            if await self._fetch(cur, key) is None:
                raise SessionNotActiveError(key.session_id)
            await cur.execute(
                self._q(
                    "SELECT role, text, at, decides FROM {schema}.short_term_messages"
                    " WHERE subject_id = %s AND session_id = %s ORDER BY idx DESC LIMIT %s"
                ),
                (*_ids(key), None if last is None else max(last, 0)),
            )
            rows = await cur.fetchall()
            return [
                Message(Role(role), text, at, MessageDecision.decode(decides))
                for role, text, at, decides in reversed(rows)
            ]

        return await self._run(work)

    async def discard(self, key: SessionKey) -> None:
        """Forgets the session and its messages (cascade); a no-op when it is not open."""

        async def work(cur: Cursor) -> None:
            await cur.execute(
                self._q(
                    "DELETE FROM {schema}.short_term_sessions"
                    " WHERE subject_id = %s AND session_id = %s"
                ),
                _ids(key),
            )

        await self._run(work)

    async def discard_subject(self, subject_id: UUID) -> int:
        """Forgets every session of the subject and their messages (cascade). The dead rows
        stay in the table's pages until vacuumed (ADR 0015 says how long)."""

        async def work(cur: Cursor) -> int:
            await cur.execute(
                self._q("DELETE FROM {schema}.short_term_sessions WHERE subject_id = %s"),
                (subject_id,),
            )
            return cur.rowcount

        return await self._run(work)
