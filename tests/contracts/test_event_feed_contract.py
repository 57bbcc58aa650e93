"""Contract of the sync's event feed (`EventFeed` and `ProfileVersions`, implemented by
`LedgerEventFeed`), run over a ledger on every event store.

Event stores: POPO (in memory), SQLite and PostgreSQL (integration; each test in its own
schema). Whether a second ledger on the same store shows up in the feed applies to SQLite and
PostgreSQL only: a POPO store belongs to the one ledger that made it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.plan import SYNCED_TOPICS
from factledger.application.sync.ports import LedgerEvent
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    FactForgotten,
    SessionRecorded,
    SubjectRegistered,
)
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.ledger_stores import LedgerStore, make_store, open_ledger
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import SESSIONS, TENANT
from factledger.testing.story.steps import StoryIds, forget

SHARED = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
EVENT_STORES = [pytest.param("popo", id="popo"), *SHARED]
SYNCED = (SessionRecorded, ChangeProposed, ChangeConfirmed, ChangeRejected, FactForgotten)


def _store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerStore]:
    kind: str = request.param
    postgres = request.getfixturevalue("postgres") if kind == "postgres" else None
    store = make_store(kind, workdir=tmp_path, postgres=postgres)
    with store.resources:
        yield store


@pytest.fixture(params=EVENT_STORES)
def event_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerStore]:
    yield from _store(request, tmp_path)


@pytest.fixture(params=SHARED)
def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerStore]:
    yield from _store(request, tmp_path)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ledger(event_store: LedgerStore, clock: ManualClock) -> Iterator[Ledger]:
    with open_ledger(event_store, clock=clock) as opened:
        yield opened


@pytest.fixture
def story(ledger: Ledger, clock: ManualClock) -> StoryIds:
    return run_story(ledger, clock, until="June")


def another_subject_speaks(ledger: Ledger, clock: ManualClock) -> UUID:
    """Registers a second subject and records one session for it (one synced event)."""
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-43")).subject_id
    at = clock.now()
    ledger.record_session(
        RecordSession(
            tenant=TENANT,
            subject_id=subject_id,
            session_id="chat-1",
            channel=Channel.CHAT,
            started_at=at,
            ended_at=at,
            transcript=(Message(Role.SUBJECT, "hello", at),),
        )
    )
    return subject_id


def synced_positions(ledger: Ledger) -> list[int]:
    """The positions the feed must return, straight from the event store's log."""
    log = ledger.recorder.select_notifications(start=1, limit=10_000)
    return [n.id for n in log if n.topic in SYNCED_TOPICS]


async def read_in_pages(feed: LedgerEventFeed, *, page: int) -> list[tuple[int, LedgerEvent]]:
    found: list[tuple[int, LedgerEvent]] = []
    while batch := await feed.read(after=found[-1][0] if found else 0, limit=page):
        assert len(batch) <= page
        found.extend(batch)
    return found


async def test_an_empty_ledger_feeds_nothing(ledger: Ledger) -> None:
    feed = LedgerEventFeed(ledger)
    assert await feed.read(after=0, limit=10) == []
    with pytest.raises(NotFoundError):
        await feed.get(1)


async def test_the_feed_is_every_synced_event_in_commit_order(
    ledger: Ledger, story: StoryIds
) -> None:
    found = await LedgerEventFeed(ledger).read(after=0, limit=1_000)
    positions = [position for position, _ in found]
    assert positions == sorted(set(positions))
    assert positions == synced_positions(ledger)
    assert all(isinstance(event, SYNCED) for _, event in found)
    assert all(event.originator_id == story.subject_id for _, event in found)
    kinds = [type(event).__name__ for _, event in found]
    assert kinds.count("SessionRecorded") == len(SESSIONS)
    assert kinds.count("ChangeConfirmed") >= 2
    versions = [event.originator_version for _, event in found]
    assert versions == sorted(versions)


async def test_reading_in_pages_loses_and_repeats_nothing(ledger: Ledger, story: StoryIds) -> None:
    feed = LedgerEventFeed(ledger)
    whole = await feed.read(after=0, limit=1_000)
    for page in (1, 2, 5):
        paged = await read_in_pages(feed, page=page)
        assert [(p, e.originator_version) for p, e in paged] == [
            (p, e.originator_version) for p, e in whole
        ]
    last = whole[-1][0]
    assert await feed.read(after=last, limit=10) == []
    middle = whole[3][0]
    assert [p for p, _ in await feed.read(after=middle, limit=2)] == [p for p, _ in whole[4:6]]


async def test_get_returns_the_event_at_a_position(ledger: Ledger, story: StoryIds) -> None:
    feed = LedgerEventFeed(ledger)
    for position, event in await feed.read(after=0, limit=1_000):
        again = await feed.get(position)
        assert type(again) is type(event)
        assert (again.originator_id, again.originator_version) == (
            event.originator_id,
            event.originator_version,
        )
    registered = await feed.get(1)  # events the sync skips are still addressable
    assert isinstance(registered, SubjectRegistered)


async def test_get_of_a_position_not_in_the_log_is_not_found(
    ledger: Ledger, story: StoryIds
) -> None:
    feed = LedgerEventFeed(ledger)
    head = ledger.recorder.max_notification_id()
    assert head is not None
    for missing in (0, head + 1, head + 100):
        with pytest.raises(NotFoundError):
            await feed.get(missing)


async def test_events_of_another_ledger_on_the_same_store_are_fed_in_commit_order(
    shared_store: LedgerStore, clock: ManualClock
) -> None:
    with open_ledger(shared_store, clock=clock) as reader:
        feed = LedgerEventFeed(reader)
        with open_ledger(shared_store, clock=clock) as writer:
            first = run_story(writer, clock, until="June")
        fed_first = await feed.read(after=0, limit=1_000)
        with open_ledger(shared_store, clock=clock) as writer:
            second = another_subject_speaks(writer, clock)
        fed_all = await feed.read(after=0, limit=1_000)
    assert fed_all[: len(fed_first)] == fed_first
    later = fed_all[len(fed_first) :]
    assert {e.originator_id for _, e in fed_first} == {first.subject_id}
    assert [(isinstance(e, SessionRecorded), e.originator_id) for _, e in later] == [(True, second)]
    assert min(p for p, _ in later) > max(p for p, _ in fed_first)


async def test_profiles_read_back_as_of_each_version(ledger: Ledger, story: StoryIds) -> None:
    feed = LedgerEventFeed(ledger)
    confirmed = [
        e for _, e in await feed.read(after=0, limit=1_000) if isinstance(e, ChangeConfirmed)
    ]
    supplier = [e for e in confirmed if e.field == "supplier"]
    assert len(supplier) == 2
    texts = []
    for event in supplier:
        profile = await feed.profile_at(story.subject_id, event.originator_version)
        fields = profile["fields"]
        assert isinstance(fields, dict)
        texts.append(fields["supplier"]["text"])
    assert profile["profile_version"] == supplier[-1].profile_version
    assert texts[0] != texts[1]
    assert await feed.tenant_of(story.subject_id) == TENANT
    assert await feed.tenants_of([story.subject_id] * 2) == {story.subject_id: TENANT}


async def test_a_forgotten_field_leaves_its_trace_and_no_value(
    ledger: Ledger, story: StoryIds, clock: ManualClock
) -> None:
    forget(ledger, clock, story, "supplier")
    feed = LedgerEventFeed(ledger)
    found = await feed.read(after=0, limit=1_000)
    forgotten = next(e for _, e in found if isinstance(e, FactForgotten))
    profile = await feed.profile_at(story.subject_id, forgotten.originator_version)
    fields = profile["fields"]
    assert isinstance(fields, dict)
    assert "supplier" not in fields
    trace = await feed.field_trace(story.subject_id, "supplier", forgotten.originator_version)
    proposed = [e for _, e in found if isinstance(e, ChangeProposed) and e.field == "supplier"]
    assert set(trace.change_ids) == {e.change_id for e in proposed}
    confirmed = [e for _, e in found if isinstance(e, ChangeConfirmed)]
    first_supplier = next(e for e in confirmed if e.field == "supplier")
    held = [
        e.profile_version
        for e in confirmed
        if e.originator_version >= first_supplier.originator_version
    ]
    assert trace.profile_versions == tuple(held)
