"""Statements are weighed by when they were said, not by when their sessions were recorded: a
session recorded late (an import's skipped session, a back-dated call) never puts an older
single value over a newer one."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from factledger.application.ledger.commands import ApproveChange, RecordSession
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.proposals.plan import change_id_for
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import ChangeStatus
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, TENANT, Rig, day


def stated(slot: str, value: str) -> ExtractedFact:
    return ExtractedFact("f0", f"{slot} is {value}", slot, (0,), value=value)


async def said(
    rig: Rig, scripted: ScriptedExtractor, lead: UUID, session: str, at: datetime, value: str
) -> None:
    """A session said `at`, recorded on the ledger's clock a day after the previous one."""
    text = f"We buy from {value}."
    scripted.script(text, stated("supplier", value))
    rig.clock.set(day(6, 1 + len(rig.subject(lead).sessions)))
    said_words = (Message(Role.SUBJECT, text, at),)
    cmd = RecordSession(TENANT, lead, session, Channel.CHAT, at, at, said_words)
    rig.ledger.record_session(cmd)
    await rig.worker(scripted).run_once()


def suppliers(rig: Rig, lead: UUID) -> dict[str, ChangeRecord]:
    changes = rig.subject(lead).changes.values()
    return {c.proposal.evidence.session_id: c for c in changes if c.proposal.evidence}


async def test_an_older_value_recorded_late_leaves_the_newer_pending_one_alone(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "march", day(3, 3), "Globex")
    await said(rig, scripted, lead, "january", day(1, 14), "Initech")

    changes = suppliers(rig, lead)
    assert set(changes) == {"march"}  # January's Initech is older news: nothing proposed
    assert changes["march"].status is ChangeStatus.PENDING


async def test_an_older_value_recorded_late_proposes_nothing_over_an_approved_newer_one(
    rig: Rig,
) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "march", day(3, 3), "Globex")
    march = change_id_for(lead, "march", MODEL, "supplier")
    rig.ledger.approve_change(ApproveChange(TENANT, lead, march, "reviewer-1"))
    await said(rig, scripted, lead, "january", day(1, 14), "Initech")

    assert set(suppliers(rig, lead)) == {"march"}
    assert rig.subject(lead).fields["supplier"].change_id == march


async def test_a_newer_value_recorded_late_still_supersedes_the_older_pending_one(
    rig: Rig,
) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "january", day(1, 14), "Initech")
    await said(rig, scripted, lead, "march", day(3, 3), "Globex")

    changes = suppliers(rig, lead)
    assert changes["january"].status is ChangeStatus.SUPERSEDED
    assert changes["march"].status is ChangeStatus.PENDING
