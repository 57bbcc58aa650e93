"""`SessionBuffer` in PostgreSQL beside the event store (several API servers share it).

Indexes come from a counter on the session row, incremented under its row lock, so concurrent
appends to one session never collide.
"""

from __future__ import annotations

from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.application.sessions.types import (
    ActiveSession,
    SessionBufferUnavailableError,
    SessionId,
    SessionNotActiveError,
)
from factledger.domain.errors import SessionConflictError
from factledger.domain.transcript import Channel, Message, Role

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS {schema}.short_term_sessions (
        session_id text PRIMARY KEY, subject_id uuid NOT NULL, channel text NOT NULL,
        started_at timestamptz NOT NULL, message_count integer NOT NULL DEFAULT 0,
        withheld integer NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS {schema}.short_term_messages (
        session_id text NOT NULL REFERENCES {schema}.short_term_sessions ON DELETE CASCADE,
        idx integer NOT NULL, role text NOT NULL, text text NOT NULL, at timestamptz,
        PRIMARY KEY (session_id, idx))""",
    # Message ids make a retried append a no-op; tables made without them gain the column.
    "ALTER TABLE {schema}.short_term_messages ADD COLUMN IF NOT EXISTS message_id text",
    """CREATE UNIQUE INDEX IF NOT EXISTS short_term_message_ids
        ON {schema}.short_term_messages (session_id, message_id)""",
)


class PostgresSessionBuffer:
    """Active sessions in two tables of one schema; build it with `await ....connect(dsn)`."""

    def __init__(self, tables: PostgresTables) -> None:
        self._tables = tables
        self._q, self._run = tables.q, tables.run

    @classmethod
    async def connect(
        cls, conninfo: str, *, schema: str = "public", max_size: int = 4
    ) -> PostgresSessionBuffer:
        """Opens a pool and creates the tables if needed."""

        async def create(tables: PostgresTables, cur: Cursor) -> None:
            for statement in _SCHEMA:
                await cur.execute(tables.q(statement))

        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            max_size=max_size,
            error=lambda: SessionBufferUnavailableError("postgres session buffer failed"),
            create=create,
        )
        return cls(tables)

    async def close(self) -> None:
        """Closes the pool."""
        await self._tables.close()

    async def _fetch(self, cur: Cursor, session_id: str) -> ActiveSession | None:
        await cur.execute(
            self._q(
                "SELECT session_id, subject_id, channel, started_at, message_count, withheld"
                " FROM {schema}.short_term_sessions WHERE session_id = %s"
            ),
            (session_id,),
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
        )

    async def open(self, session: ActiveSession) -> ActiveSession:
        """Opens the session, or returns the one already open with the same parameters."""

        async def work(cur: Cursor) -> ActiveSession:
            await cur.execute(
                self._q(
                    "INSERT INTO {schema}.short_term_sessions (session_id, subject_id, channel,"
                    " started_at) VALUES (%s, %s, %s, %s) ON CONFLICT (session_id) DO NOTHING"
                ),
                (session.session_id, session.subject_id, session.channel.value, session.started_at),
            )
            stored = await self._fetch(cur, session.session_id)
            if stored is None:  # discarded between the insert and the read: open it again
                raise SessionNotActiveError(session.session_id)
            if (stored.subject_id, stored.channel) != (session.subject_id, session.channel):
                raise SessionConflictError(
                    f"session {session.session_id}: open for another subject or channel"
                )
            return stored

        return await self._run(work)

    async def get(self, session_id: SessionId) -> ActiveSession | None:
        """The open session, or None."""
        return await self._run(lambda cur: self._fetch(cur, session_id))

    async def append(
        self, session_id: SessionId, message: Message, *, message_id: str | None = None
    ) -> int:
        """Appends a message and returns its index (the first one's, for a known message id)."""

        async def work(cur: Cursor) -> int:
            if message_id is not None:
                # The session row's lock serialises twins: the second reads the first's row.
                await cur.execute(
                    self._q(
                        "SELECT 1 FROM {schema}.short_term_sessions WHERE session_id = %s"
                        " FOR UPDATE"
                    ),
                    (session_id,),
                )
                if await cur.fetchone() is None:
                    raise SessionNotActiveError(session_id)
                await cur.execute(
                    self._q(
                        "SELECT idx FROM {schema}.short_term_messages"
                        " WHERE session_id = %s AND message_id = %s"
                    ),
                    (session_id, message_id),
                )
                seen = await cur.fetchone()
                if seen is not None:
                    return int(seen[0])
            await cur.execute(
                self._q(
                    "UPDATE {schema}.short_term_sessions SET message_count = message_count + 1"
                    " WHERE session_id = %s RETURNING message_count"
                ),
                (session_id,),
            )
            row = await cur.fetchone()
            if row is None:
                raise SessionNotActiveError(session_id)
            index = int(row[0]) - 1
            await cur.execute(
                self._q(
                    "INSERT INTO {schema}.short_term_messages"
                    " (session_id, idx, role, text, at, message_id) VALUES (%s, %s, %s, %s, %s, %s)"
                ),
                (session_id, index, message.role.value, message.text, message.at, message_id),
            )
            return index

        return await self._run(work)

    async def withhold(self, session_id: SessionId) -> int:
        """Counts one withheld message and returns the new count."""

        async def work(cur: Cursor) -> int:
            await cur.execute(
                self._q(
                    "UPDATE {schema}.short_term_sessions SET withheld = withheld + 1"
                    " WHERE session_id = %s RETURNING withheld"
                ),
                (session_id,),
            )
            row = await cur.fetchone()
            if row is None:
                raise SessionNotActiveError(session_id)
            return int(row[0])

        return await self._run(work)

    async def messages(self, session_id: SessionId, *, last: int | None = None) -> list[Message]:
        """The kept messages, oldest first."""

        async def work(cur: Cursor) -> list[Message]:
            if await self._fetch(cur, session_id) is None:
                raise SessionNotActiveError(session_id)
            await cur.execute(
                self._q(
                    "SELECT role, text, at FROM {schema}.short_term_messages"
                    " WHERE session_id = %s ORDER BY idx DESC LIMIT %s"
                ),
                (session_id, None if last is None else max(last, 0)),
            )
            rows = await cur.fetchall()
            return [Message(Role(role), text, at) for role, text, at in reversed(rows)]

        return await self._run(work)

    async def discard(self, session_id: SessionId) -> None:
        """Forgets the session and its messages (cascade); a no-op when it is not open."""

        async def work(cur: Cursor) -> None:
            await cur.execute(
                self._q("DELETE FROM {schema}.short_term_sessions WHERE session_id = %s"),
                (session_id,),
            )

        await self._run(work)
