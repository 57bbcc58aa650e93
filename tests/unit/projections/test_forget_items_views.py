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
from support.told_lead import DAY, TENANT, told_lead

from factledger.application.ledger.commands import ApproveChange
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ViewStore
from factledger.application.ledger.queries import Clock
from factledger.domain.provenance import Operation, Origin
from factledger.domain.values import ListValue
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.testing.story.script import JAN

NAMED = "We mostly lose deals to Acme, Quillotron and Zorb."
ASKS = "Please take Quillotron off whatever notes you have."


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
    with told_lead(store) as lead:
        names = ListValue(("Acme", "Quillotron", "Zorb"))
        listed = lead.proposed("competitors", Operation.SET, names, lead.said("s1", NAMED))
        lead.ledger.approve_change(ApproveChange(TENANT, lead.sid, listed, "rev"))
        lead.follower.catch_up()
        forget = ListValue(("Quillotron",))
        request = lead.proposed("competitors", Operation.FORGET, forget, lead.said("s2", ASKS))
        lead.follower.catch_up()
        lead.clock.advance(DAY)
        lead.ledger.approve_change(ApproveChange(TENANT, lead.sid, request, "rev"))
        lead.follower.catch_up()
        reader = ViewStoreProfileReader(store)
        yield Told(lead.ledger, lead.projection, reader, lead.sid, listed)


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
