"""A typed field (number, money, date) takes the value a `ValueReader` reads from the slot's
words, against the session's day; words read as no value feed nothing, and without a reader
typed fields are left to callers (ADR 0158). A scripted reader stands in for the words one."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from uuid import UUID

import pytest
from structlog.testing import capture_logs

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.proposals.candidates import TypedReading, candidates_from
from factledger.application.proposals.schema import FieldFeed, KindFeeds
from factledger.application.proposals.typed import NO_HINTS, DateOrder, ReadingHints
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.provenance import ChangeStatus
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import (
    DateValue,
    FieldValue,
    MoneyValue,
    NumberValue,
    ProfileSchema,
    TextValue,
    ValueType,
)
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, TENANT, day

KIND = "buyer"
FEEDS = KindFeeds(
    (
        FieldFeed(
            "date_of_birth", ValueType.DATE, ("date_of_birth",), date_order=DateOrder.DAY_FIRST
        ),
        FieldFeed("budget", ValueType.MONEY, ("budget",), currency="GBP"),
        FieldFeed("household_size", ValueType.NUMBER, ("household_size",)),
        FieldFeed("preferred_area", ValueType.TEXT, ("preferred_area",)),
    )
)
SAID = "My date of birth is 9 June 68. Budget about 450 thousand. It's the two of us, in Leith."


@dataclass
class ScriptedReader:
    """Reads what it was scripted to, and keeps what it was asked."""

    readings: dict[str, FieldValue]
    asked: list[tuple[ValueType, str, date, str | None]] = field(default_factory=list)
    orders: list[DateOrder | None] = field(default_factory=list)
    threads: set[int] = field(default_factory=set)

    def read(
        self, kind: ValueType, words: str, *, said_on: date, hints: ReadingHints = NO_HINTS
    ) -> FieldValue | None:
        self.asked.append((kind, words, said_on, hints.currency))
        self.orders.append(hints.date_order)
        self.threads.add(threading.get_ident())
        return self.readings.get(words)


def fact(key: str, slot: str, value: str, condition: str | None = None) -> ExtractedFact:
    return ExtractedFact(key, f"{slot} is {value}", slot, (0,), value=value, condition=condition)


FACTS = (
    fact("f0", "date_of_birth", "9 June 68"),
    fact("f1", "budget", "about 450 thousand"),
    fact("f2", "household_size", "the two of us"),
    fact("f3", "preferred_area", "Leith"),
)
READINGS: dict[str, FieldValue] = {
    "9 June 68": DateValue(date(1968, 6, 9)),
    "about 450 thousand": MoneyValue(Decimal(450000), "GBP"),
}
TRANSCRIPT = (Message(Role.SUBJECT, SAID),)


def test_a_typed_field_takes_the_value_read_from_its_words_on_the_sessions_day() -> None:
    reader = ScriptedReader(READINGS)
    typed = TypedReading(reader, date(2026, 4, 2))

    found = {c.feed.field: c for c in candidates_from(FACTS, TRANSCRIPT, FEEDS, "s-1", typed)}

    assert found["date_of_birth"].typed == DateValue(date(1968, 6, 9))
    assert found["date_of_birth"].values == ("1968-06-09",)  # as rendered: compared by meaning
    assert found["budget"].typed == MoneyValue(Decimal(450000), "GBP")
    assert "household_size" not in found  # read as no number: nothing, never the words
    assert found["preferred_area"].typed is None
    assert found["preferred_area"].values == ("Leith",)
    assert reader.orders == [DateOrder.DAY_FIRST, None, None]  # each field's own
    assert reader.asked == [
        (ValueType.DATE, "9 June 68", date(2026, 4, 2), None),
        (ValueType.MONEY, "about 450 thousand", date(2026, 4, 2), "GBP"),
        (ValueType.NUMBER, "the two of us", date(2026, 4, 2), None),
    ]


def test_a_typed_candidate_quotes_the_whole_sentence_that_said_its_words() -> None:
    typed = TypedReading(ScriptedReader(READINGS), date(2026, 4, 2))

    found = {c.feed.field: c for c in candidates_from(FACTS, TRANSCRIPT, FEEDS, "s-1", typed)}

    evidence = found["date_of_birth"].evidence
    assert evidence is not None
    assert evidence.quote == "My date of birth is 9 June 68."
    budget = found["budget"].evidence
    assert budget is not None
    assert budget.quote == "Budget about 450 thousand."


def test_without_a_reader_typed_fields_are_left_to_callers() -> None:
    found = candidates_from(FACTS, TRANSCRIPT, FEEDS, "s-1")

    assert [c.feed.field for c in found] == ["preferred_area"]


def test_a_hedged_typed_value_keeps_its_condition_and_reads_only_the_slots_words() -> None:
    hedged = fact("f0", "budget", "about 450 thousand", condition="if the sale goes through")
    reader = ScriptedReader(READINGS)

    (found,) = candidates_from(
        [hedged], TRANSCRIPT, FEEDS, "s-1", TypedReading(reader, date(2026, 4, 2))
    )

    assert found.typed == MoneyValue(Decimal(450000), "GBP")
    assert found.condition == "if the sale goes through"
    assert reader.asked[0][1] == "about 450 thousand"


@pytest.fixture
def ledger() -> Iterator[Ledger]:
    schema = ProfileSchema({f.field: f.type for f in FEEDS.fields})
    ledger = Ledger(
        popo_env(), clock=ManualClock(day(4, 1)), keys=InMemoryKeyStore(), schemas={KIND: schema}
    )
    yield ledger
    ledger.close()


def worker(ledger: Ledger, proposer: SessionProposer) -> SyncWorker:
    feed = LedgerEventFeed(ledger)
    clock = ManualClock(day(4, 2))
    backend = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    ports = SyncPorts(InMemorySyncStore(), feed, feed, backend, proposer=proposer)
    return SyncWorker(ports, SyncOptions(backoff_s=0.0))


async def review(
    ledger: Ledger, sync: SyncWorker, subject_id: UUID, session: str, text: str
) -> None:
    at = day(4, 2)
    said = (Message(Role.SUBJECT, text, at),)
    ledger.record_session(RecordSession(TENANT, subject_id, session, Channel.CHAT, at, at, said))
    assert (await sync.run_once()).dead == 0


AGAIN = "Born on the ninth of June, nineteen sixty-eight."


async def test_the_proposer_proposes_typed_values_the_schema_accepts_and_no_repeat(
    ledger: Ledger,
) -> None:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, KIND, "buyer-1")).subject_id
    scripted = ScriptedExtractor()
    reader = ScriptedReader({**READINGS, "the two of us": NumberValue(Decimal(2))})
    proposer = SessionProposer(ledger, scripted, MODEL, feeds={KIND: FEEDS}, values=reader)
    sync = worker(ledger, proposer)

    scripted.script(SAID, *FACTS)
    await review(ledger, sync, subject_id, "s-1", SAID)

    pending = {
        c.field: c.proposal.value
        for c in ledger.subject(TENANT, subject_id).changes.values()
        if c.status is ChangeStatus.PENDING
    }
    assert pending == {
        "date_of_birth": DateValue(date(1968, 6, 9)),
        "budget": MoneyValue(Decimal(450000), "GBP"),
        "household_size": NumberValue(Decimal(2)),
        "preferred_area": TextValue("Leith"),
    }
    assert {asked[2] for asked in reader.asked} == {date(2026, 4, 2)}  # the session's day
    # Read off the event loop, which may be the server's: a first date loads dateparser.
    assert threading.get_ident() not in reader.threads

    # The same birthday in other words, in a later session: the same date, nothing new.
    words = "the ninth of June, nineteen sixty-eight"
    scripted.script(AGAIN, fact("f0", "date_of_birth", words))
    reader.readings[words] = DateValue(date(1968, 6, 9))
    await review(ledger, sync, subject_id, "s-2", AGAIN)

    changes = ledger.subject(TENANT, subject_id).changes.values()
    assert [c.proposal.value for c in changes if c.field == "date_of_birth"] == [
        DateValue(date(1968, 6, 9))
    ]
    assert (ValueType.DATE, words, date(2026, 4, 2), None) in reader.asked


@dataclass
class FailingOn(ScriptedReader):
    """Raises on one phrase, as a parsing library's fault would."""

    fails_on: str = ""

    def read(
        self, kind: ValueType, words: str, *, said_on: date, hints: ReadingHints = NO_HINTS
    ) -> FieldValue | None:
        if words == self.fails_on:
            raise OverflowError("date value out of range")
        return super().read(kind, words, said_on=said_on, hints=hints)


async def test_a_reader_that_fails_on_one_field_costs_that_field_only(ledger: Ledger) -> None:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, KIND, "buyer-2")).subject_id
    scripted = ScriptedExtractor()
    reader = FailingOn(dict(READINGS), fails_on="9 June 68")
    proposer = SessionProposer(ledger, scripted, MODEL, feeds={KIND: FEEDS}, values=reader)
    scripted.script(SAID, *FACTS)

    with capture_logs() as logs:
        await review(ledger, worker(ledger, proposer), subject_id, "s-1", SAID)  # none dead

    fields = {c.field for c in ledger.subject(TENANT, subject_id).changes.values()}
    assert fields == {"budget", "preferred_area"}  # the count reads as none, as scripted
    failed = [e for e in logs if e["event"] == "proposals.typed_reading_failed"]
    assert failed == [
        {
            "event": "proposals.typed_reading_failed",
            "field": "date_of_birth",
            "error_type": "OverflowError",
            "log_level": "warning",
        }
    ]
