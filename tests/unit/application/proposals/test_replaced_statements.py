"""Recall no longer offers as current a statement that a later statement of its field
replaced (`recall.replaced`), read from the ledger's proposals: reversible by a rejection."""

from __future__ import annotations

from uuid import UUID

from factledger.application.ledger.commands import RejectChange
from factledger.application.memory.record_ids import transcript_document_id
from factledger.application.memory.types import HitKind, SearchHit
from factledger.application.proposals.plan import change_id_for
from factledger.application.recall.ledger_forget_source import mask_of
from factledger.application.recall.replaced import replaced_statements, without_replaced
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, TENANT, Rig
from .test_plan_by_meaning import REVIEWER, said, stated


async def says(rig: Rig, lead: UUID, session: str, text: str, *values: tuple[str, str]) -> None:
    """The subject says `text` in a session of its own, stating each (field, value)."""
    facts = [stated(f"f{n}", field, value) for n, (field, value) in enumerate(values)]
    await said(rig, ScriptedExtractor(), lead, session, text, *facts)


def hit(lead: UUID, session: str, text: str, index: int = 0) -> SearchHit:
    document = transcript_document_id(lead, session)
    return SearchHit(
        f"{session}-{text}",
        text,
        0.9,
        HitKind.MEMORY,
        True,
        False,
        None,
        document,
        source_indexes=(index,),
    )


async def test_the_earlier_statements_memory_leaves_recall_and_the_latest_stays(rig: Rig) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "We buy our boxes from Initech.", ("supplier", "Initech"))
    await says(rig, lead, "s2", "Globex now.", ("supplier", "Globex"))

    mask = mask_of(rig.subject(lead))
    old = hit(lead, "s1", "buys their boxes from Initech")
    new = hit(lead, "s2", "Globex now")
    elsewhere = hit(lead, "s1", "buys their boxes from Initech", index=3)
    both = hit(lead, "s1", "buys their boxes from Initech, then Globex")
    assert not mask.empty
    assert without_replaced([old, new, elsewhere, both], mask.replaced) == [new, elsewhere, both]


async def test_the_same_value_in_another_wording_replaces_nothing(rig: Rig) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "Budget is 12000.", ("budget", "12000"))
    await says(rig, lead, "s2", "About 12k now.", ("budget", "12k"))
    assert replaced_statements(rig.subject(lead)) == ()


async def test_a_rejected_update_gives_the_earlier_statement_back(rig: Rig) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "Initech.", ("supplier", "Initech"))
    await says(rig, lead, "s2", "Globex now.", ("supplier", "Globex"))
    assert len(replaced_statements(rig.subject(lead))) == 1

    update = change_id_for(lead, "s2", MODEL, "supplier")
    rig.ledger.reject_change(RejectChange(TENANT, lead, update, REVIEWER, "wrong"))
    assert replaced_statements(rig.subject(lead)) == ()


async def test_a_sentence_that_states_another_standing_field_loses_only_the_old_value(
    rig: Rig,
) -> None:
    lead = rig.register()
    sentence = "I'm head of ops at Acme, and we buy from Initech."
    await says(rig, lead, "s1", sentence, ("supplier", "Initech"), ("employer", "Acme"))
    await says(rig, lead, "s2", "Globex now.", ("supplier", "Globex"))

    whole = hit(lead, "s1", "is head of ops at Acme, and they buy from Initech")
    employer = hit(lead, "s1", "is head of ops at Acme")
    replaced = replaced_statements(rig.subject(lead))
    assert without_replaced([whole, employer], replaced) == [employer]


async def test_the_same_amount_said_more_firmly_replaces_nothing_for_recall(rig: Rig) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "We might go to 440.", ("budget", "we might go to 440"))
    await says(rig, lead, "s2", "440 is good now.", ("budget", "440 is good now"))
    assert replaced_statements(rig.subject(lead)) == ()

    await says(rig, lead, "s3", "Make it 455.", ("budget", "455"))
    replaced = {r.document_id for r in replaced_statements(rig.subject(lead))}
    assert replaced == {transcript_document_id(lead, s) for s in ("s1", "s2")}
