"""The ledger logs ids and counts, never content; per-kind schemas are enforced by the ledger."""

from __future__ import annotations

import pytest
import structlog

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.commands import ProposeChange, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import UnknownFieldError, ValueTypeMismatchError
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import ProfileSchema, TextValue, ValueType
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN


def test_the_story_logs_no_content() -> None:
    clock = ManualClock(JAN)
    with (
        Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore()) as ledger,
        structlog.testing.capture_logs() as logs,
    ):
        run_story(ledger, clock)
    assert {entry["event"] for entry in logs} >= {"ledger.events_saved", "ledger.keys_forgotten"}
    captured = repr(logs)
    for content in ("Supplier", "pricing", "delivery", "packaging", "decided to buy", "lead-0042"):
        assert content not in captured


def test_the_ledger_applies_the_schema_of_the_subject_kind() -> None:
    schema = ProfileSchema({"supplier": ValueType.TEXT, "budget": ValueType.MONEY})
    with Ledger(popo_env(), schemas={"lead": schema}, keys=InMemoryKeyStore()) as ledger:
        sid = ledger.register_subject(RegisterSubject("acme", "lead", "x")).subject_id

        def propose(field: str) -> None:
            ledger.propose_change(
                ProposeChange(
                    "acme",
                    sid,
                    field,
                    Operation.SET,
                    TextValue("A"),
                    Origin.INFERRED,
                    Actor(ActorKind.MODEL, "m"),
                    0,
                )
            )

        propose("supplier")
        with pytest.raises(UnknownFieldError):
            propose("colour")
        with pytest.raises(ValueTypeMismatchError):
            propose("budget")
        # Kinds without a schema take any well-formed field.
        other = ledger.register_subject(RegisterSubject("acme", "case", "y")).subject_id
        ledger.propose_change(
            ProposeChange(
                "acme",
                other,
                "colour",
                Operation.SET,
                TextValue("red"),
                Origin.INFERRED,
                Actor(ActorKind.MODEL, "m"),
                0,
            )
        )
