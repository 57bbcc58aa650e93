"""Contract of the `SessionBuffer` port, run over every adapter."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.application.ports import SessionBuffer
from factledger.application.sessions.types import (
    ActiveSession,
    SessionConflictError,
    SessionId,
    SessionNotActiveError,
)
from factledger.domain.transcript import Channel, Message, Role

SUBJECT_A = uuid.UUID("00000000-0000-0000-0000-00000000000a")
SUBJECT_B = uuid.UUID("00000000-0000-0000-0000-00000000000b")
T0 = datetime(2026, 3, 12, 10, 0, tzinfo=UTC)

ADAPTERS = [
    pytest.param("in_memory", id="in-memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]


@pytest.fixture(params=ADAPTERS)
async def buffer(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionBuffer]:
    if request.param == "in_memory":
        yield InMemorySessionBuffer()
    elif request.param == "sqlite":
        sqlite_buffer = SqliteSessionBuffer(tmp_path / "short_term.sqlite")
        yield sqlite_buffer
        sqlite_buffer.close()
    else:
        location: PostgresLocation = request.getfixturevalue("postgres")
        schema = f"stm_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(location.conninfo, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        pg_buffer = await PostgresSessionBuffer.connect(location.conninfo, schema=schema)
        yield pg_buffer
        await pg_buffer.close()


def session(session_id: str = "s-1", subject: uuid.UUID = SUBJECT_A) -> ActiveSession:
    return ActiveSession(
        session_id=SessionId(session_id), subject_id=subject, channel=Channel.VOICE, started_at=T0
    )


async def test_open_is_idempotent_and_returns_the_stored_session(buffer: SessionBuffer) -> None:
    first = await buffer.open(session())
    await buffer.append(SessionId("s-1"), Message(Role.SUBJECT, "hello", T0))
    again = await buffer.open(session())
    assert first.started_at == T0
    assert again.message_count == 1
    assert again.subject_id == SUBJECT_A
    assert again.channel is Channel.VOICE


async def test_same_id_for_another_subject_is_a_conflict(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    with pytest.raises(SessionConflictError):
        await buffer.open(session(subject=SUBJECT_B))


async def test_messages_keep_order_and_indexes(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    indexes = [
        await buffer.append(SessionId("s-1"), Message(Role.SUBJECT, f"turn {n}", T0))
        for n in range(4)
    ]
    assert indexes == [0, 1, 2, 3]
    texts = [m.text for m in await buffer.messages(SessionId("s-1"))]
    assert texts == ["turn 0", "turn 1", "turn 2", "turn 3"]
    last_two = await buffer.messages(SessionId("s-1"), last=2)
    assert [m.text for m in last_two] == ["turn 2", "turn 3"]
    assert last_two[0].at == T0
    assert last_two[0].role is Role.SUBJECT


async def test_concurrent_appends_get_distinct_indexes(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    indexes = await asyncio.gather(
        *(buffer.append(SessionId("s-1"), Message(Role.AGENT, str(n))) for n in range(10))
    )
    assert sorted(indexes) == list(range(10))
    assert len(await buffer.messages(SessionId("s-1"))) == 10


async def test_withheld_messages_are_only_counted(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    assert await buffer.withhold(SessionId("s-1")) == 1
    assert await buffer.withhold(SessionId("s-1")) == 2
    stored = await buffer.get(SessionId("s-1"))
    assert stored is not None
    assert (stored.withheld, stored.message_count) == (2, 0)


async def test_sessions_are_isolated(buffer: SessionBuffer) -> None:
    await buffer.open(session("s-1"))
    await buffer.open(session("s-2", SUBJECT_B))
    await buffer.append(SessionId("s-1"), Message(Role.SUBJECT, "only in one"))
    assert await buffer.messages(SessionId("s-2")) == []


async def test_discard_clears_and_is_idempotent(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    await buffer.append(SessionId("s-1"), Message(Role.SUBJECT, "gone soon"))
    await buffer.discard(SessionId("s-1"))
    await buffer.discard(SessionId("s-1"))
    assert await buffer.get(SessionId("s-1")) is None
    with pytest.raises(SessionNotActiveError):
        await buffer.messages(SessionId("s-1"))
    reopened = await buffer.open(session())
    assert reopened.message_count == 0
    assert await buffer.messages(SessionId("s-1")) == []


async def test_unknown_sessions_raise_not_active(buffer: SessionBuffer) -> None:
    with pytest.raises(SessionNotActiveError):
        await buffer.append(SessionId("nope"), Message(Role.SUBJECT, "x"))
    with pytest.raises(SessionNotActiveError):
        await buffer.withhold(SessionId("nope"))
    assert await buffer.get(SessionId("nope")) is None


async def test_a_retried_append_with_its_message_id_adds_nothing(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    s1 = SessionId("s-1")
    assert await buffer.append(s1, Message(Role.SUBJECT, "first", T0), message_id="m-1") == 0
    assert await buffer.append(s1, Message(Role.AGENT, "second"), message_id="m-2") == 1
    assert await buffer.append(s1, Message(Role.SUBJECT, "first", T0), message_id="m-1") == 0
    assert await buffer.append(s1, Message(Role.AGENT, "no id")) == 2
    assert [m.text for m in await buffer.messages(s1)] == ["first", "second", "no id"]
    stored = await buffer.get(s1)
    assert stored is not None
    assert stored.message_count == 3


async def test_concurrent_twins_of_one_message_id_append_once(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    s1 = SessionId("s-1")
    indexes = await asyncio.gather(
        *(buffer.append(s1, Message(Role.SUBJECT, "twin"), message_id="m-1") for _ in range(6))
    )
    assert indexes == [0] * 6
    assert len(await buffer.messages(s1)) == 1


async def test_message_ids_are_per_session_and_go_with_a_discard(buffer: SessionBuffer) -> None:
    await buffer.open(session("s-1"))
    await buffer.open(session("s-2"))
    await buffer.append(SessionId("s-1"), Message(Role.SUBJECT, "a"), message_id="m-1")
    assert await buffer.append(SessionId("s-2"), Message(Role.SUBJECT, "b"), message_id="m-1") == 0
    assert len(await buffer.messages(SessionId("s-2"))) == 1
    await buffer.discard(SessionId("s-1"))
    await buffer.open(session("s-1"))
    assert await buffer.append(SessionId("s-1"), Message(Role.SUBJECT, "c"), message_id="m-1") == 0
    assert [m.text for m in await buffer.messages(SessionId("s-1"))] == ["c"]


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
