"""The sync's feed reads the ledger's keys in as few key-store calls as it can: planning opens
no message's words, and an item's event gets all its keys in one call."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import UTC, datetime
from uuid import UUID

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.plan import plan
from factledger.domain.events import SessionRecorded
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

AT = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)
SAID = ("We now buy our flour from Zorblax.", "We have 12 employees.", "Call me in the morning.")


class CountingKeyStore(InMemoryKeyStore):
    """Counts the reads of keys by id, and the ids each read asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[int] = []

    def key(self, key_id: str) -> bytes | None:
        self.reads.append(1)
        return super().key(key_id)

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        self.reads.append(len(key_ids))
        return super().keys_by_id(key_ids)


@pytest.fixture
def keys() -> CountingKeyStore:
    return CountingKeyStore()


@pytest.fixture
def ledger(keys: CountingKeyStore) -> Iterator[Ledger]:
    ledger = Ledger(popo_env(), clock=ManualClock(), keys=keys)
    yield ledger
    ledger.close()


def record_session(ledger: Ledger) -> UUID:
    subject_id = ledger.register_subject(RegisterSubject("acme", "lead", "c-1")).subject_id
    said = tuple(Message(Role.SUBJECT, text, AT) for text in SAID)
    ledger.record_session(
        RecordSession("acme", subject_id, "s-1", Channel.CHAT, AT, AT, transcript=said)
    )
    return subject_id


def session_position(ledger: Ledger) -> int:
    found = ledger.recorder.select_notifications(start=1, limit=100, topics=[SessionRecorded.TOPIC])
    return found[0].id


async def test_planning_opens_no_line_and_plans_what_the_opened_event_plans(
    ledger: Ledger, keys: CountingKeyStore
) -> None:
    record_session(ledger)
    ledger.mapper.forget_cached()  # as a worker process meets the session
    keys.reads.clear()

    planned = await LedgerEventFeed(ledger).read(after=0, limit=100)

    session = next(event for _, event in planned if isinstance(event, SessionRecorded))
    assert all(str(line["text"]).startswith("fl-enc:") for line in session.transcript)
    assert max(keys.reads) < len(SAID)  # the lines' keys were never asked for
    position = session_position(ledger)
    opened = await LedgerEventFeed(ledger).get(position)
    assert plan(position, session, "acme", propose=True) == plan(
        position, opened, "acme", propose=True
    )


async def test_an_items_event_reads_its_keys_in_one_call_and_opens_every_line(
    ledger: Ledger, keys: CountingKeyStore
) -> None:
    record_session(ledger)
    position = session_position(ledger)
    ledger.mapper.forget_cached()
    keys.reads.clear()

    event = await LedgerEventFeed(ledger).get(position)

    assert isinstance(event, SessionRecorded)
    assert [line["text"] for line in event.transcript] == list(SAID)
    assert len(keys.reads) == 1
