"""The profile views after a request to forget what was said is approved (ADR 0174): the
request reads as confirmed and redacted, a pending change quoting the line as forgotten, no
new profile version is written, the line's words are in no view, and a rebuild from the
events (whose forgotten words read back as nothing) equals the live views."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from support.told_lead import DAY, TENANT, ToldLead, told_lead

from factledger.application.ledger.commands import ApproveChange
from factledger.application.ledger.ports import ViewStore
from factledger.domain.provenance import Operation
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.values import ListValue, TextValue
from factledger.projections.profile.projection import ProfileProjection

SAID = "Dev and I split up, I moved out of Harbour Lane."
ASKS = "Please forget what I told you about Dev."


@dataclass
class Told:
    lead: ToldLead
    request: UUID
    quoting: UUID

    @property
    def projection(self) -> ProfileProjection:
        return self.lead.projection

    @property
    def sid(self) -> UUID:
        return self.lead.sid


@pytest.fixture
def told(store_factory: Callable[[], ViewStore]) -> Iterator[Told]:
    with told_lead(store_factory()) as lead:
        home = lead.said("s1", SAID)
        quoting = lead.proposed("home", Operation.SET, TextValue("Harbour Lane"), home)
        lines = ListValue((line_ref("s1", 1),))
        request = lead.proposed(SAID_LINES, Operation.FORGET_SAID, lines, lead.said("s2", ASKS))
        lead.follower.catch_up()
        lead.clock.advance(DAY)
        lead.ledger.approve_change(ApproveChange(TENANT, lead.sid, request, "rev"))
        lead.follower.catch_up()
        yield Told(lead, request, quoting)


def test_the_request_is_confirmed_and_what_quoted_the_line_withdrawn(told: Told) -> None:
    views = told.projection.dump()
    changes = dict(views["change"])
    request = changes[f"{told.sid}:{told.request}"]
    assert (request["status"], request["forgotten"]) == ("confirmed", True)
    assert changes[f"{told.sid}:{told.quoting}"]["status"] == "forgotten"
    # Version 0, the registration's, is the only one: no field changed.
    assert [doc["version"] for _, doc in views["version"]] == [0]
    assert "Harbour Lane" not in json.dumps(views)
    assert "Dev" not in json.dumps(views)


@pytest.mark.parametrize("page", [1, 2, 50])
def test_a_rebuild_equals_the_live_views(told: Told, page: int) -> None:
    live = told.projection.dump()
    told.projection.rebuild(told.lead.ledger, page=page)
    assert told.projection.dump() == live
