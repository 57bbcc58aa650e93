"""Contract of the `SessionBuffer` port (`application.ports`), run over every adapter.

Adapters: in-memory, SQLite and PostgreSQL (integration). Each test gets a fresh store and
can open a second handle on it, as a second API process would (the in-memory adapter's
"second handle" is the same object: it lives in one process). Durability across a close and
the error raised by a closed handle apply to the SQLite and PostgreSQL adapters only; the
in-memory one has nothing to close and is lost on restart by design.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from support.stores import close, new_schema

from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.application.sessions.ports import SessionBuffer
from factledger.application.sessions.types import (
    ActiveSession,
    SessionBufferUnavailableError,
    SessionId,
    SessionKey,
    SessionNotActiveError,
)
from factledger.domain.errors import SessionConflictError, SessionFullError
from factledger.domain.transcript import Channel, Message, MessageDecision, Role, Verdict

SUBJECT_A = uuid.UUID("00000000-0000-0000-0000-00000000000a")
SUBJECT_B = uuid.UUID("00000000-0000-0000-0000-00000000000b")
T0 = datetime(2026, 3, 12, 10, 0, tzinfo=UTC)
S1 = SessionKey(SUBJECT_A, SessionId("s-1"))
# The message cap every handle is built with: small, so a test fills a session quickly (the
# default is the domain's MAX_MESSAGES; tests/e2e/test_api_session_cap.py drives that one).
CAP = 12

DURABLE = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
ADAPTERS = [pytest.param("in_memory", id="in-memory"), *DURABLE]


@dataclass
class Buffers:
    """Handles on one store; `another()` opens one more on the same storage."""

    open_handle: Callable[[], Awaitable[SessionBuffer]]
    opened: list[SessionBuffer] = field(default_factory=list)

    async def another(self) -> SessionBuffer:
        self.opened.append(await self.open_handle())
        return self.opened[-1]


async def _buffers(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Buffers]:
    kind: str = request.param
    if kind == "in_memory":
        shared = InMemorySessionBuffer(max_messages=CAP)

        async def open_handle() -> SessionBuffer:
            return shared
    elif kind == "sqlite":

        async def open_handle() -> SessionBuffer:
            return SqliteSessionBuffer(tmp_path / "short_term.sqlite", max_messages=CAP)
    else:
        location: PostgresLocation = request.getfixturevalue("postgres")
        schema = new_schema(location, "stm")

        async def open_handle() -> SessionBuffer:
            return await PostgresSessionBuffer.connect(
                location.conninfo, schema=schema, max_messages=CAP
            )

    buffers = Buffers(open_handle)
    yield buffers
    for handle in buffers.opened:
        await close(handle)


@pytest.fixture(params=ADAPTERS)
async def buffers(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Buffers]:
    async for made in _buffers(request, tmp_path):
        yield made


@pytest.fixture(params=DURABLE)
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Buffers]:
    async for made in _buffers(request, tmp_path):
        yield made


@pytest.fixture
async def buffer(buffers: Buffers) -> SessionBuffer:
    return await buffers.another()


def session(
    session_id: str = "s-1", subject: uuid.UUID = SUBJECT_A, channel: Channel = Channel.VOICE
) -> ActiveSession:
    return ActiveSession(
        session_id=SessionId(session_id), subject_id=subject, channel=channel, started_at=T0
    )


async def test_open_is_idempotent_and_returns_the_stored_session(buffer: SessionBuffer) -> None:
    first = await buffer.open(session())
    await buffer.append(S1, Message(Role.SUBJECT, "hello", T0))
    again = await buffer.open(session())
    assert first.started_at == T0
    assert (first.message_count, first.withheld) == (0, 0)
    assert again.message_count == 1
    assert again.subject_id == SUBJECT_A
    assert again.channel is Channel.VOICE


async def test_same_id_on_another_channel_is_a_conflict(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    with pytest.raises(SessionConflictError):
        await buffer.open(session(channel=Channel.CHAT))
    stored = await buffer.get(S1)
    assert stored is not None
    assert (stored.subject_id, stored.channel) == (SUBJECT_A, Channel.VOICE)


async def test_the_conversation_type_reads_back_and_a_reopen_must_name_the_same(
    buffers: Buffers,
) -> None:
    first, second = await buffers.another(), await buffers.another()
    typed = replace(session(), conversation_type="support_ticket")
    assert (await first.open(typed)).conversation_type == "support_ticket"
    assert (await second.open(typed)).conversation_type == "support_ticket"
    stored = await second.get(S1)
    assert stored is not None
    assert stored.conversation_type == "support_ticket"
    with pytest.raises(SessionConflictError):
        await first.open(session())  # the same id without a type is another session
    with pytest.raises(SessionConflictError):
        await first.open(replace(session(), conversation_type="sales_discovery"))


async def test_one_session_id_names_a_separate_session_per_subject(buffer: SessionBuffer) -> None:
    # Given subject A's session s-1 with a message and a withheld one
    await buffer.open(session())
    await buffer.append(S1, Message(Role.SUBJECT, "only A's"), message_id="m-1")
    await buffer.withhold(S1)
    b1 = SessionKey(SUBJECT_B, S1.session_id)
    # When subject B opens s-1 on another channel
    opened = await buffer.open(session(subject=SUBJECT_B, channel=Channel.CHAT))
    # Then it is a fresh session of B's, and A's is untouched by anything done to B's
    assert (opened.subject_id, opened.channel, opened.message_count, opened.withheld) == (
        SUBJECT_B,
        Channel.CHAT,
        0,
        0,
    )
    assert await buffer.messages(b1) == []
    assert await buffer.append(b1, Message(Role.SUBJECT, "only B's"), message_id="m-1") == 0
    await buffer.discard(b1)
    assert await buffer.get(b1) is None
    stored = await buffer.get(S1)
    assert stored is not None
    assert (stored.subject_id, stored.channel, stored.message_count, stored.withheld) == (
        SUBJECT_A,
        Channel.VOICE,
        1,
        1,
    )
    assert [m.text for m in await buffer.messages(S1)] == ["only A's"]


async def test_a_subject_cannot_reach_another_subjects_session(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    b1 = SessionKey(SUBJECT_B, S1.session_id)
    assert await buffer.get(b1) is None
    with pytest.raises(SessionNotActiveError):
        await buffer.append(b1, Message(Role.SUBJECT, "x"))
    with pytest.raises(SessionNotActiveError):
        await buffer.append(b1, Message(Role.SUBJECT, "x"), message_id="m-1")
    with pytest.raises(SessionNotActiveError):
        await buffer.withhold(b1)
    with pytest.raises(SessionNotActiveError):
        await buffer.messages(b1)
    await buffer.discard(b1)
    stored = await buffer.get(S1)
    assert stored is not None
    assert (stored.message_count, stored.withheld) == (0, 0)


async def test_concurrent_opens_of_one_id_by_two_subjects_both_succeed(buffers: Buffers) -> None:
    a, b = await buffers.another(), await buffers.another()
    opened = await asyncio.gather(
        *(h.open(session(subject=s)) for h, s in [(a, SUBJECT_A), (b, SUBJECT_B)] * 3)
    )
    assert {(s.subject_id, s.session_id) for s in opened} == {
        (SUBJECT_A, S1.session_id),
        (SUBJECT_B, S1.session_id),
    }


async def test_messages_keep_order_and_indexes(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    indexes = [await buffer.append(S1, Message(Role.SUBJECT, f"turn {n}", T0)) for n in range(4)]
    assert indexes == [0, 1, 2, 3]
    texts = [m.text for m in await buffer.messages(S1)]
    assert texts == ["turn 0", "turn 1", "turn 2", "turn 3"]
    last_two = await buffer.messages(S1, last=2)
    assert [m.text for m in last_two] == ["turn 2", "turn 3"]
    assert last_two[0].at == T0
    assert last_two[0].role is Role.SUBJECT


async def test_last_counts_from_the_newest_and_never_overflows(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    for n in range(3):
        await buffer.append(S1, Message(Role.AGENT, f"turn {n}"))
    assert await buffer.messages(S1, last=0) == []
    assert [m.text for m in await buffer.messages(S1, last=1)] == ["turn 2"]
    assert [m.text for m in await buffer.messages(S1, last=10)] == ["turn 0", "turn 1", "turn 2"]


async def test_messages_read_back_as_written(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    berlin = timezone(timedelta(hours=2))
    written = [
        Message(Role.SUBJECT, "Grüße 👋\nsecond line, 'quoted' and \"double\"", T0),
        Message(Role.AGENT, "no time given"),
        Message(Role.STAFF, "noted", datetime(2026, 3, 12, 12, 0, tzinfo=berlin)),
        Message(Role.SYSTEM, "session resumed", T0 + timedelta(microseconds=7)),
    ]
    for message in written:
        await buffer.append(S1, message)
    assert await buffer.messages(S1) == written


async def test_a_messages_decision_on_a_change_reads_back(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    change = uuid.UUID("0b7e4c1e-5f7d-4a53-9a41-2a3e0d6c9b10")
    written = [
        Message(Role.SUBJECT, "Yes, that is right.", T0, MessageDecision(Verdict.CONFIRMS, change)),
        Message(Role.SUBJECT, "No, not that.", T0, MessageDecision(Verdict.DECLINES, change)),
        Message(Role.SUBJECT, "Thanks.", T0),
    ]
    for message in written:
        await buffer.append(S1, message)
    assert await buffer.messages(S1) == written


async def test_concurrent_appends_get_distinct_indexes(buffers: Buffers) -> None:
    a, b = await buffers.another(), await buffers.another()
    await a.open(session())
    indexes = await asyncio.gather(
        *(h.append(S1, Message(Role.AGENT, str(n))) for n, h in enumerate([a, b] * 5))
    )
    assert sorted(indexes) == list(range(10))
    assert len(await b.messages(S1)) == 10
    assert sorted(int(m.text) for m in await a.messages(S1)) == list(range(10))


async def test_withheld_messages_are_only_counted(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    assert await buffer.withhold(S1) == 1
    assert await buffer.withhold(S1) == 2
    stored = await buffer.get(S1)
    assert stored is not None
    assert (stored.withheld, stored.message_count) == (2, 0)
    assert await buffer.messages(S1) == []


async def test_sessions_are_isolated(buffer: SessionBuffer) -> None:
    s2 = SessionKey(SUBJECT_B, SessionId("s-2"))
    await buffer.open(session("s-1"))
    await buffer.open(session("s-2", SUBJECT_B))
    await buffer.append(S1, Message(Role.SUBJECT, "only in one"))
    await buffer.withhold(S1)
    assert await buffer.messages(s2) == []
    other = await buffer.get(s2)
    assert other is not None
    assert (other.message_count, other.withheld) == (0, 0)
    await buffer.discard(s2)
    assert [m.text for m in await buffer.messages(S1)] == ["only in one"]


async def test_discard_clears_and_is_idempotent(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    await buffer.append(S1, Message(Role.SUBJECT, "gone soon"))
    await buffer.withhold(S1)
    await buffer.discard(S1)
    await buffer.discard(S1)
    assert await buffer.get(S1) is None
    with pytest.raises(SessionNotActiveError):
        await buffer.messages(S1)
    reopened = await buffer.open(session(channel=Channel.CHAT))  # the id is free again
    assert (reopened.message_count, reopened.withheld) == (0, 0)
    assert await buffer.messages(S1) == []


async def test_unknown_sessions_raise_not_active(buffer: SessionBuffer) -> None:
    nope = SessionKey(SUBJECT_A, SessionId("nope"))
    with pytest.raises(SessionNotActiveError):
        await buffer.append(nope, Message(Role.SUBJECT, "x"))
    with pytest.raises(SessionNotActiveError):
        await buffer.append(nope, Message(Role.SUBJECT, "x"), message_id="m-1")
    with pytest.raises(SessionNotActiveError):
        await buffer.withhold(nope)
    with pytest.raises(SessionNotActiveError):
        await buffer.messages(nope)
    assert await buffer.get(nope) is None
    await buffer.discard(nope)


async def test_a_retried_append_with_its_message_id_adds_nothing(buffer: SessionBuffer) -> None:
    await buffer.open(session())
    assert await buffer.append(S1, Message(Role.SUBJECT, "first", T0), message_id="m-1") == 0
    assert await buffer.append(S1, Message(Role.AGENT, "second"), message_id="m-2") == 1
    assert await buffer.append(S1, Message(Role.SUBJECT, "first", T0), message_id="m-1") == 0
    assert await buffer.append(S1, Message(Role.AGENT, "no id")) == 2
    assert [m.text for m in await buffer.messages(S1)] == ["first", "second", "no id"]
    stored = await buffer.get(S1)
    assert stored is not None
    assert stored.message_count == 3


async def test_concurrent_twins_of_one_message_id_append_once(buffers: Buffers) -> None:
    a, b = await buffers.another(), await buffers.another()
    await a.open(session())
    indexes = await asyncio.gather(
        *(h.append(S1, Message(Role.SUBJECT, "twin"), message_id="m-1") for h in [a, b] * 3)
    )
    assert indexes == [0] * 6
    assert len(await a.messages(S1)) == 1


async def test_concurrent_opens_of_one_session_agree(buffers: Buffers) -> None:
    a, b = await buffers.another(), await buffers.another()
    opened = await asyncio.gather(*(h.open(session()) for h in [a, b] * 3))
    assert {(s.session_id, s.subject_id, s.channel, s.message_count) for s in opened} == {
        (S1.session_id, SUBJECT_A, Channel.VOICE, 0)
    }


async def test_message_ids_are_per_session_and_go_with_a_discard(buffer: SessionBuffer) -> None:
    s2 = SessionKey(SUBJECT_A, SessionId("s-2"))
    await buffer.open(session("s-1"))
    await buffer.open(session("s-2"))
    await buffer.append(S1, Message(Role.SUBJECT, "a"), message_id="m-1")
    assert await buffer.append(s2, Message(Role.SUBJECT, "b"), message_id="m-1") == 0
    assert len(await buffer.messages(s2)) == 1
    await buffer.discard(S1)
    await buffer.open(session("s-1"))
    assert await buffer.append(S1, Message(Role.SUBJECT, "c"), message_id="m-1") == 0
    assert [m.text for m in await buffer.messages(S1)] == ["c"]


async def test_a_second_handle_sees_the_first_ones_writes(buffers: Buffers) -> None:
    a, b = await buffers.another(), await buffers.another()
    await a.open(session())
    await a.append(S1, Message(Role.SUBJECT, "from a"), message_id="m-1")
    assert await b.append(S1, Message(Role.SUBJECT, "from a"), message_id="m-1") == 0
    assert await b.append(S1, Message(Role.AGENT, "from b")) == 1
    await b.withhold(S1)
    stored = await a.get(S1)
    assert stored is not None
    assert (stored.message_count, stored.withheld) == (2, 1)
    await b.discard(S1)
    assert await a.get(S1) is None


async def test_sessions_survive_closing_the_store(durable: Buffers) -> None:
    first = await durable.another()
    await first.open(session())
    await first.append(S1, Message(Role.SUBJECT, "kept", T0), message_id="m-1")
    await first.withhold(S1)
    await close(first)

    reopened = await durable.another()
    stored = await reopened.get(S1)
    assert stored is not None
    assert (stored.subject_id, stored.message_count, stored.withheld) == (SUBJECT_A, 1, 1)
    assert await reopened.messages(S1) == [Message(Role.SUBJECT, "kept", T0)]
    assert await reopened.append(S1, Message(Role.SUBJECT, "kept", T0), message_id="m-1") == 0


async def test_a_closed_store_raises_its_port_error(durable: Buffers) -> None:
    handle = await durable.another()
    await handle.open(session())
    await close(handle)
    with pytest.raises(SessionBufferUnavailableError):
        await handle.get(S1)
    with pytest.raises(SessionBufferUnavailableError):
        await handle.append(S1, Message(Role.SUBJECT, "too late"))


async def fill(buffer: SessionBuffer, count: int) -> None:
    for n in range(count):
        await buffer.append(S1, Message(Role.AGENT, f"turn {n}"), message_id=f"m-{n}")


async def test_a_full_session_refuses_one_more_message_and_keeps_what_it_holds(
    buffer: SessionBuffer,
) -> None:
    await buffer.open(session())
    await fill(buffer, CAP)
    with pytest.raises(SessionFullError, match=str(CAP)):
        await buffer.append(S1, Message(Role.AGENT, "one too many"))
    with pytest.raises(SessionFullError):
        await buffer.append(S1, Message(Role.AGENT, "one too many"), message_id="m-new")
    # A retry of a message it holds is still answered with the first append's index.
    assert await buffer.append(S1, Message(Role.AGENT, "turn 7"), message_id="m-7") == 7
    stored = await buffer.get(S1)
    assert stored is not None
    assert stored.message_count == CAP
    assert len(await buffer.messages(S1)) == CAP
    assert await buffer.withhold(S1) == 1  # withheld messages are not stored, so not capped


async def test_concurrent_appends_never_overfill_a_session(buffers: Buffers) -> None:
    a, b = await buffers.another(), await buffers.another()
    await a.open(session())
    await fill(a, CAP - 3)
    outcomes = await asyncio.gather(
        *(h.append(S1, Message(Role.AGENT, str(n))) for n, h in enumerate([a, b] * 5)),
        return_exceptions=True,
    )
    kept = sorted(o for o in outcomes if isinstance(o, int))
    assert kept == [CAP - 3, CAP - 2, CAP - 1]
    assert all(isinstance(o, SessionFullError) for o in outcomes if not isinstance(o, int))
    assert len(await b.messages(S1)) == CAP


async def test_discarding_a_subject_removes_every_session_of_it_and_no_other(
    buffer: SessionBuffer,
) -> None:
    # Given two open sessions of one subject and one of another, with messages
    for key in (S1, SessionKey(SUBJECT_A, SessionId("s-2")), SessionKey(SUBJECT_B, S1.session_id)):
        await buffer.open(session(key.session_id, key.subject_id))
        await buffer.append(key, Message(Role.SUBJECT, f"said in {key.session_id}", T0))
    # When the first subject is discarded (its erasure)
    assert await buffer.discard_subject(SUBJECT_A) == 2
    # Then its sessions are gone, appends find none, and the other subject's session stays
    assert await buffer.get(S1) is None
    with pytest.raises(SessionNotActiveError):
        await buffer.append(S1, Message(Role.SUBJECT, "too late", T0))
    other = SessionKey(SUBJECT_B, S1.session_id)
    assert [m.text for m in await buffer.messages(other)] == ["said in s-1"]
    assert await buffer.discard_subject(SUBJECT_A) == 0  # a retry removes nothing more


async def test_an_erased_subjects_messages_leave_the_sqlite_files_and_its_wal(
    tmp_path: Path,
) -> None:
    # The words must not survive in the database file's free pages or in the write-ahead log
    path = tmp_path / "short_term.sqlite"
    buffer = SqliteSessionBuffer(path)
    canary = "canary-budget-forty-thousand " * 40  # spans pages, so rows are really written
    try:
        await buffer.open(session())
        for _ in range(20):
            await buffer.append(S1, Message(Role.SUBJECT, canary, T0))
        files = [path, path.with_name(path.name + "-wal")]
        assert any(canary.encode()[:29] in f.read_bytes() for f in files if f.exists())

        await buffer.discard_subject(SUBJECT_A)

        for f in files:
            if f.exists():
                assert b"canary-budget" not in f.read_bytes(), f.name
    finally:
        await close(buffer)
