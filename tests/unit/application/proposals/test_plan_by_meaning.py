"""The model weighs a statement against what the subject holds by meaning, not by characters:
the same value in another wording proposes nothing, another value is an update that names
what it replaces, and a correction ("not X, Y") says which value it corrects."""

from __future__ import annotations

from uuid import UUID

from factledger.application.ledger.commands import ApproveChange, RejectChange
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.proposals.plan import change_id_for
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus
from factledger.domain.transcript import Role
from factledger.domain.values import TextValue
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, TENANT, Rig, day

REVIEWER = Actor(ActorKind.STAFF, "reviewer-1")


def stated(key: str, slot: str, value: str, *, negated: bool = False) -> ExtractedFact:
    return ExtractedFact(key, f"{slot} is {value}", slot, (0,), value=value, negated=negated)


def changes(rig: Rig, subject_id: UUID, field: str) -> list[ChangeRecord]:
    return [c for c in rig.subject(subject_id).changes.values() if c.field == field]


async def said(
    rig: Rig,
    scripted: ScriptedExtractor,
    lead: UUID,
    session: str,
    text: str,
    *facts: ExtractedFact,
) -> None:
    scripted.script(text, *facts)
    rig.record(lead, session, day(4, 2 + len(rig.subject(lead).sessions)), (Role.SUBJECT, text))
    await rig.worker(scripted).run_once()


async def test_the_same_amount_in_another_format_proposes_nothing(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "s1", "Budget is 12000.", stated("f0", "budget", "12000"))
    first = change_id_for(lead, "s1", MODEL, "budget")
    rig.ledger.approve_change(ApproveChange(TENANT, lead, first, "reviewer-1"))

    await said(rig, scripted, lead, "s2", "About 12,000.", stated("f0", "budget", "12,000"))
    await said(rig, scripted, lead, "s3", "Say 12k.", stated("f0", "budget", "12k"))

    assert [c.change_id for c in changes(rig, lead, "budget")] == [first]


async def test_an_open_or_rejected_value_in_another_wording_proposes_nothing(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "s1", "Supplier-B.", stated("f0", "supplier", "Supplier-B"))
    await said(rig, scripted, lead, "s2", "supplier b", stated("f0", "supplier", "supplier b"))
    assert len(changes(rig, lead, "supplier")) == 1

    (open_,) = changes(rig, lead, "supplier")
    rig.ledger.reject_change(RejectChange(TENANT, lead, open_.change_id, REVIEWER, "wrong"))
    await said(rig, scripted, lead, "s3", "SUPPLIER B!", stated("f0", "supplier", "SUPPLIER B"))
    assert len(changes(rig, lead, "supplier")) == 1


async def test_a_shorter_wording_of_a_name_said_before_proposes_nothing(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "s1", "Obinna Eze here.", stated("f0", "name", "Obinna Eze"))
    await said(rig, scripted, lead, "s2", "It's Obinna.", stated("f0", "name", "Obinna"))
    await said(rig, scripted, lead, "s3", "Eze, yes.", stated("f0", "name", "Eze"))

    assert [c.proposal.value for c in changes(rig, lead, "name")] == [TextValue("Obinna Eze")]


async def test_a_value_that_only_names_its_field_proposes_nothing(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "s1", "Budget is 12000.", stated("f0", "budget", "12000"))
    first = change_id_for(lead, "s1", MODEL, "budget")
    rig.ledger.approve_change(ApproveChange(TENANT, lead, first, "reviewer-1"))

    await said(
        rig, scripted, lead, "s2", "Budget as before.", stated("f0", "budget", "Budget as before")
    )
    await said(rig, scripted, lead, "s3", "Same budget.", stated("f0", "budget", "Same budget"))
    await said(rig, scripted, lead, "s4", "Supplier?", stated("f0", "supplier", "supplier"))

    assert [c.change_id for c in changes(rig, lead, "budget")] == [first]
    assert rig.subject(lead).fields["budget"].value == TextValue("12000")
    assert changes(rig, lead, "supplier") == []


async def test_a_longer_wording_or_one_without_a_lowercase_word_is_an_update(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "s1", "Obinna.", stated("f0", "name", "Obinna"))
    await said(rig, scripted, lead, "s2", "Obinna Eze.", stated("f0", "name", "Obinna Eze"))
    await said(rig, scripted, lead, "s3", "The Pro plan.", stated("f0", "plan", "Pro plan"))
    await said(rig, scripted, lead, "s4", "Pro Max now.", stated("f0", "plan", "Pro"))

    assert [c.proposal.value for c in changes(rig, lead, "name")] == [
        TextValue("Obinna"),
        TextValue("Obinna Eze"),
    ]
    assert [c.proposal.value for c in changes(rig, lead, "plan")] == [
        TextValue("Pro plan"),
        TextValue("Pro"),
    ]


async def test_another_value_is_an_update_that_names_the_value_it_replaces(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "s1", "Initech.", stated("f0", "supplier", "Initech"))
    first = change_id_for(lead, "s1", MODEL, "supplier")
    rig.ledger.approve_change(ApproveChange(TENANT, lead, first, "reviewer-1"))

    await said(rig, scripted, lead, "s2", "Globex now.", stated("f0", "supplier", "Globex"))

    update = rig.subject(lead).change(change_id_for(lead, "s2", MODEL, "supplier"))
    assert update.status is ChangeStatus.PENDING
    assert update.proposal.rationale is not None
    assert update.proposal.rationale.startswith("update of supplier")
    assert update.proposal.rationale.endswith("replaces Initech")


async def test_a_correction_says_which_value_it_corrects(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(
        rig,
        scripted,
        lead,
        "s1",
        "Not Initech, Globex.",
        stated("f0", "supplier", "Initech", negated=True),
        stated("f1", "supplier", "Globex"),
    )

    (correction,) = changes(rig, lead, "supplier")
    assert correction.proposal.rationale is not None
    assert correction.proposal.rationale.startswith("correction of supplier")
    assert correction.proposal.rationale.endswith("replaces Initech")


async def test_a_negation_of_the_value_itself_corrects_nothing(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(
        rig,
        scripted,
        lead,
        "s1",
        "No longer Globex; well, Globex again.",
        stated("f0", "supplier", "globex", negated=True),
        stated("f1", "supplier", "Globex"),
    )

    (proposal,) = changes(rig, lead, "supplier")
    assert proposal.proposal.rationale is not None
    assert proposal.proposal.rationale.startswith("new value of supplier")
    assert "replaces" not in proposal.proposal.rationale


async def test_an_update_of_a_value_nobody_reviewed_yet_names_it(rig: Rig) -> None:
    scripted, lead = ScriptedExtractor(), rig.register()
    await said(rig, scripted, lead, "s1", "Initech.", stated("f0", "supplier", "Initech"))
    await said(rig, scripted, lead, "s2", "Globex now.", stated("f0", "supplier", "Globex"))
    await said(rig, scripted, lead, "s3", "Umbrella.", stated("f0", "supplier", "Umbrella"))

    second = rig.subject(lead).change(change_id_for(lead, "s2", MODEL, "supplier"))
    third = rig.subject(lead).change(change_id_for(lead, "s3", MODEL, "supplier"))
    assert second.status is ChangeStatus.SUPERSEDED
    assert second.proposal.rationale is not None
    assert second.proposal.rationale.startswith("update of supplier")
    assert second.proposal.rationale.endswith("replaces Initech")
    assert third.proposal.rationale is not None
    assert third.proposal.rationale.endswith("replaces Globex")
