"""Context stops serving a profile field once its `valid_until` has passed, by the clock: no
event is written at that time, and a later confirmed change serves the field again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.commands import (
    ApproveChange,
    ExpireField,
    ProposeChange,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.ledger_sources import LedgerRecallSources
from factledger.application.recall.notes import render_context
from factledger.application.recall.policy import RecallPolicies
from factledger.application.recall.service import Recall, RecallPorts
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

START = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
UNTIL = START + timedelta(days=30)
STAFF = Actor(ActorKind.STAFF, "ops-1")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def ledger(clock: ManualClock) -> Iterator[Ledger]:
    with Ledger(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, keys=InMemoryKeyStore()
    ) as ledger:
        yield ledger


def set_supplier(ledger: Ledger, subject_id: UUID, name: str) -> None:
    cmd = ProposeChange(
        "acme",
        subject_id,
        "supplier",
        Operation.SET,
        TextValue(name),
        Origin.INFERRED,
        Actor(ActorKind.MODEL, "m"),
        ledger.subject("acme", subject_id).profile_version,
    )
    ledger.propose_change(cmd)
    ledger.approve_change(ApproveChange("acme", subject_id, cmd.change_id, "rev"))


async def context(ledger: Ledger) -> str:
    sources = LedgerRecallSources(ledger)
    recall = Recall(RecallPorts(backend=None, sources=sources, policies=RecallPolicies()))
    subject_id = ledger.subject_id_for("acme", "lead", "lead-1")
    return render_context(await recall.session_context(subject_id))


async def test_context_serves_a_field_until_its_valid_until_and_not_after(
    ledger: Ledger, clock: ManualClock
) -> None:
    subject_id = ledger.register_subject(RegisterSubject("acme", "lead", "lead-1")).subject_id
    set_supplier(ledger, subject_id, "Supplier Tamarind")
    ledger.expire_field(ExpireField("acme", subject_id, "supplier", UNTIL, STAFF))
    version = ledger.subject("acme", subject_id).version

    clock.set(UNTIL - timedelta(seconds=1))
    before = await context(ledger)
    clock.set(UNTIL)
    after = await context(ledger)

    assert "Supplier Tamarind" in before
    assert "Supplier Tamarind" not in after
    # Expired by the clock alone: the field is still held, and nothing was written.
    assert ledger.subject("acme", subject_id).version == version
    assert ledger.subject("acme", subject_id).fields["supplier"].valid_until == UNTIL


async def test_a_later_confirmed_change_serves_the_field_again(
    ledger: Ledger, clock: ManualClock
) -> None:
    subject_id = ledger.register_subject(RegisterSubject("acme", "lead", "lead-1")).subject_id
    set_supplier(ledger, subject_id, "Supplier Tamarind")
    ledger.expire_field(ExpireField("acme", subject_id, "supplier", START, STAFF))
    assert "Supplier" not in await context(ledger)

    clock.advance(timedelta(days=1))
    set_supplier(ledger, subject_id, "Supplier Quince")

    assert "Supplier Quince" in await context(ledger)
