"""The profile views after a request to forget one item of a list is approved (ADR 0160): the
current profile and the new version hold the kept items, the history says the field was
forgotten and what it kept from then on, nothing shows the forgotten item, and a rebuild from
the events (whose earlier values read back as nothing) equals the live views."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

import pytest

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.commands import (
    ApproveChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ViewStore
from factledger.application.ledger.queries import Clock
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import ListValue
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import JAN

TENANT = "acme"
NAMED = "We mostly lose deals to Acme, Quillotron and Zorb."
ASKS = "Please take Quillotron off whatever notes you have."
MODEL = Actor(ActorKind.MODEL, "m")
DAY = timedelta(days=1)


@dataclass
class Told:
    ledger: Ledger
    projection: ProfileProjection
    reader: ViewStoreProfileReader
    sid: UUID
    listed: UUID


@pytest.fixture
def told(store_factory: Callable[[], ViewStore]) -> Iterator[Told]:
    store = store_factory()
    projection = ProfileProjection(store)
    clock = ManualClock(JAN)
    with Ledger(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, keys=InMemoryKeyStore()
    ) as ledger:
        follower = Follower(ledger, [projection], page=3)
        sid = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-9")).subject_id

        def said(session_id: str, text: str) -> Evidence:
            clock.advance(DAY)
            at = clock.now()
            lines = (Message(Role.AGENT, "Anything else?", at), Message(Role.SUBJECT, text, at))
            ledger.record_session(
                RecordSession(TENANT, sid, session_id, Channel.CHAT, at, at, lines)
            )
            return Evidence(session_id, 1, text)

        def proposed(operation: Operation, items: tuple[str, ...], quote: Evidence) -> UUID:
            version = ledger.subject(TENANT, sid).profile_version
            cmd = ProposeChange(
                TENANT, sid, "competitors", operation, ListValue(items), Origin.STATED,
                MODEL, version, evidence=quote,
            )  # fmt: skip
            ledger.propose_change(cmd)
            return cmd.change_id

        listed = proposed(Operation.SET, ("Acme", "Quillotron", "Zorb"), said("s1", NAMED))
        ledger.approve_change(ApproveChange(TENANT, sid, listed, "rev"))
        follower.catch_up()
        request = proposed(Operation.FORGET, ("Quillotron",), said("s2", ASKS))
        follower.catch_up()
        clock.advance(DAY)
        ledger.approve_change(ApproveChange(TENANT, sid, request, "rev"))
        follower.catch_up()
        yield Told(ledger, projection, ViewStoreProfileReader(store), sid, listed)


def test_the_current_profile_keeps_the_items_not_named(told: Told) -> None:
    profile = told.reader.current(TENANT, told.sid)
    kept = profile.fields["competitors"]
    assert kept.value == ListValue(("Acme", "Zorb"))
    assert kept.version == profile.version == 2
    assert kept.change_id == told.listed
    assert kept.origin is Origin.STATED
    assert kept.evidence is None  # the words that stated it went with the field's
    assert "Quillotron" not in json.dumps(told.projection.dump())


def test_the_history_says_forgotten_then_kept(told: Told) -> None:
    history = told.reader.history(TENANT, told.sid, "competitors")
    assert [(h.kind, h.forgotten, h.display) for h in history] == [
        ("set", True, "[forgotten]"),
        ("forgotten", True, None),
        ("kept", False, "Acme, Zorb"),
    ]
    assert history[0].until_version == 2
    assert history[2].until_version is None
    earlier = told.reader.version(TENANT, told.sid, 1).fields["competitors"]
    assert (earlier.forgotten, earlier.value) == (True, None)


def test_as_said_before_the_forget_shows_the_kept_items_only(told: Told) -> None:
    said_by = JAN + 1 * DAY + timedelta(hours=1)  # after the list was said, before the request
    profile = told.reader.as_of(TENANT, told.sid, said_by, Clock.SAID)
    assert profile.fields["competitors"].value == ListValue(("Acme", "Zorb"))


@pytest.mark.parametrize("page", [1, 2, 50])
def test_a_rebuild_equals_the_live_views(told: Told, page: int) -> None:
    live = told.projection.dump()
    told.projection.rebuild(told.ledger, page=page)
    assert told.projection.dump() == live
