"""The profile views after a request to forget what was said is approved (ADR 0174): the
request reads as confirmed and redacted, a pending change quoting the line as forgotten, no
new profile version is written, the line's words are in no view, and a rebuild from the
events (whose forgotten words read back as nothing) equals the live views."""

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
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import ListValue, TextValue
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import JAN

TENANT = "acme"
SAID = "Dev and I split up, I moved out of Harbour Lane."
ASKS = "Please forget what I told you about Dev."
MODEL = Actor(ActorKind.MODEL, "m")
DAY = timedelta(days=1)


@dataclass
class Told:
    ledger: Ledger
    projection: ProfileProjection
    sid: UUID
    request: UUID
    quoting: UUID


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

        def proposed(field: str, operation: Operation, value: object, quote: Evidence) -> UUID:
            cmd = ProposeChange(
                TENANT, sid, field, operation, value, Origin.STATED, MODEL, 0, evidence=quote,
            )  # fmt: skip
            ledger.propose_change(cmd)
            return cmd.change_id

        quoting = proposed("home", Operation.SET, TextValue("Harbour Lane"), said("s1", SAID))
        lines = ListValue((line_ref("s1", 1),))
        request = proposed(SAID_LINES, Operation.FORGET_SAID, lines, said("s2", ASKS))
        follower.catch_up()
        clock.advance(DAY)
        ledger.approve_change(ApproveChange(TENANT, sid, request, "rev"))
        follower.catch_up()
        yield Told(ledger, projection, sid, request, quoting)


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
    told.projection.rebuild(told.ledger, page=page)
    assert told.projection.dump() == live
