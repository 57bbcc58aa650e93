"""Short-term memory: screening, buffering, and ending a session into one recording."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import structlog

from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.application.sessions.types import (
    SessionId,
    SessionKey,
    SessionNotActiveError,
    SessionRecording,
)
from factledger.domain.transcript import Channel, Message, Role

SUBJECT = uuid.UUID("00000000-0000-0000-0000-0000000000aa")
SESSION = SessionId("call-2026-03-12")
KEY = SessionKey(SUBJECT, SESSION)
T0 = datetime(2026, 3, 12, 10, 0, tzinfo=UTC)


class StepClock:
    def __init__(self) -> None:
        self.current = T0

    def now(self) -> datetime:
        self.current += timedelta(seconds=1)
        return self.current


class ListRecorder:
    """Records like the ledger does: idempotent by session id."""

    def __init__(self) -> None:
        self.recordings: dict[str, SessionRecording] = {}
        self.calls = 0

    async def record_session(self, recording: SessionRecording) -> None:
        self.calls += 1
        self.recordings.setdefault(recording.session_id, recording)


@pytest.fixture
def recorder() -> ListRecorder:
    return ListRecorder()


@pytest.fixture
def memory(recorder: ListRecorder) -> ShortTermMemory:
    ports = SessionPorts(
        buffer=InMemorySessionBuffer(),
        safety=DetectorSafetyFilter(),
        recorder=recorder,
        clock=StepClock(),
    )
    return ShortTermMemory(ports)


async def test_messages_are_buffered_and_read_back_for_the_context(memory: ShortTermMemory) -> None:
    await memory.start(SUBJECT, SESSION, Channel.VOICE)
    first = await memory.add_message(KEY, Message(Role.AGENT, "How can I help?"))
    second = await memory.add_message(KEY, Message(Role.SUBJECT, "We moved to Supplier B."))
    assert (first.index, second.index) == (0, 1)
    context = await memory.context(KEY, last=1)
    assert [m.text for m in context] == ["We moved to Supplier B."]
    assert context[0].at is not None  # stamped by the clock when the caller gave no time


async def test_flagged_and_unsafe_messages_are_dropped_and_counted(
    memory: ShortTermMemory, recorder: ListRecorder
) -> None:
    secret_card = "my card is 4111 1111 1111 1111"
    secret_flag = "something the caller's own check flagged"
    await memory.start(SUBJECT, SESSION, Channel.CHAT)
    with structlog.testing.capture_logs() as logs:
        kept = await memory.add_message(KEY, Message(Role.SUBJECT, "Supplier B now."))
        card = await memory.add_message(KEY, Message(Role.SUBJECT, secret_card))
        flagged = await memory.add_message(KEY, Message(Role.SUBJECT, secret_flag), flagged=True)
        recording = await memory.end(KEY)
    assert kept.kept
    assert not card.kept
    assert card.index is None
    assert flagged.withheld_total == 2
    assert [m.text for m in recording.transcript] == ["Supplier B now."]
    assert recording.withheld == 2
    assert recorder.recordings[SESSION] == recording
    assert {entry.get("category") for entry in logs} >= {"payment_card", "caller_flag"}
    assert secret_card not in repr(logs)
    assert secret_flag not in repr(logs)
    assert "Supplier B" not in repr(logs)


async def test_ending_records_once_and_clears_the_buffer(
    memory: ShortTermMemory, recorder: ListRecorder
) -> None:
    await memory.start(SUBJECT, SESSION, Channel.WHATSAPP)
    await memory.add_message(KEY, Message(Role.SUBJECT, "Maybe next quarter."))
    recording = await memory.end(KEY, summary={"topic": "supplier"})
    assert recording.channel is Channel.WHATSAPP
    assert recording.summary == {"topic": "supplier"}
    assert recording.ended_at > recording.started_at
    assert recorder.calls == 1
    with pytest.raises(SessionNotActiveError):
        await memory.context(KEY)
    with pytest.raises(SessionNotActiveError):
        await memory.end(KEY)


async def test_a_crash_between_recording_and_clearing_is_repaired_by_ending_again(
    recorder: ListRecorder,
) -> None:
    class FailingOnceBuffer(InMemorySessionBuffer):
        failed = False

        async def discard(self, session_id: SessionId) -> None:
            if not self.failed:
                self.failed = True
                raise RuntimeError("crash after recording")
            await super().discard(session_id)

    ports = SessionPorts(FailingOnceBuffer(), DetectorSafetyFilter(), recorder, StepClock())
    memory = ShortTermMemory(ports)
    await memory.start(SUBJECT, SESSION, Channel.VOICE)
    await memory.add_message(KEY, Message(Role.SUBJECT, "Supplier B."))
    with pytest.raises(RuntimeError):
        await memory.end(KEY)
    await memory.end(KEY)
    assert len(recorder.recordings) == 1
    assert recorder.calls == 2  # the second call was a no-op in the ledger
    assert await ports.buffer.get(KEY) is None


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("card 4111-1111-1111-1111 please", "payment_card"),
        ("my password is hunter2", "credential"),
        ("PIN: 4321", "credential"),
        ("SSN 123-45-6789", "national_id"),
    ],
)
async def test_the_filter_refuses_secrets_with_a_category(text: str, category: str) -> None:
    verdict = await DetectorSafetyFilter().screen(Message(Role.SUBJECT, text))
    assert not verdict.allowed
    assert verdict.category == category


@pytest.mark.parametrize(
    "text",
    [
        "We moved to Supplier B in March",
        "order 1234567890123 arrived late",  # 13 digits failing the Luhn check
        "the pin on the map is wrong",
    ],
)
async def test_the_filter_allows_ordinary_messages(text: str) -> None:
    verdict = await DetectorSafetyFilter().screen(Message(Role.SUBJECT, text))
    assert verdict.allowed
