"""One statement, one proposal: when the product's review finds what a caller already proposed
from the same session (same field, same value by meaning), it keeps the caller's pending
change and notes that it agrees, instead of proposing it again or superseding it."""

from __future__ import annotations

from uuid import UUID

from factledger.application.ledger.commands import ProposeChange
from factledger.domain.provenance import (
    Actor,
    ActorKind,
    ChangeStatus,
    Evidence,
    Operation,
    Origin,
)
from factledger.domain.transcript import Role
from factledger.domain.values import TextValue
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, TENANT, Rig, day
from .test_plan_by_meaning import changes, stated

AGENT = Actor(ActorKind.AGENT, "agent-1")
SAID = "We buy from Supplier-B now."


def caller_proposes(rig: Rig, lead: UUID, session: str, value: str) -> None:
    said = SAID if session == "s1" else "Hello again."
    evidence = Evidence(session, 0, said)
    command = ProposeChange(
        TENANT, lead, "supplier", Operation.SET, TextValue(value), Origin.STATED, AGENT, 0, evidence
    )
    rig.ledger.propose_change(command)


async def reviewed(rig: Rig, session: str, value: str) -> UUID:
    scripted, lead = ScriptedExtractor(), rig.register()
    scripted.script(SAID, stated("f0", "supplier", "Supplier-B"))
    rig.record(lead, "s1", day(4, 2), (Role.SUBJECT, SAID))
    rig.record(lead, "s2", day(4, 3), (Role.SUBJECT, "Hello again."))
    caller_proposes(rig, lead, session, value)
    await rig.worker(scripted).run_once()
    return lead


async def test_the_review_keeps_the_callers_change_and_notes_its_agreement(rig: Rig) -> None:
    lead = await reviewed(rig, "s1", "supplier b")
    (kept,) = changes(rig, lead, "supplier")
    assert kept.status is ChangeStatus.PENDING
    assert kept.proposal.proposed_by == AGENT
    assert rig.subject(lead).agreed_by[kept.change_id] == (MODEL,)
    assert kept.change_id not in rig.subject(lead).superseded_by


async def test_the_same_value_from_another_session_is_kept_but_not_an_agreement(rig: Rig) -> None:
    lead = await reviewed(rig, "s2", "Supplier-B")
    (kept,) = changes(rig, lead, "supplier")
    assert kept.status is ChangeStatus.PENDING
    assert kept.change_id not in rig.subject(lead).agreed_by


async def test_another_value_from_the_same_session_is_superseded_as_before(rig: Rig) -> None:
    lead = await reviewed(rig, "s1", "Supplier-C")
    callers, models = (
        [c for c in changes(rig, lead, "supplier") if c.proposal.proposed_by == who]
        for who in (AGENT, MODEL)
    )
    assert [c.status for c in callers] == [ChangeStatus.SUPERSEDED]
    assert [c.status for c in models] == [ChangeStatus.PENDING]
    assert rig.subject(lead).agreed_by == {}
