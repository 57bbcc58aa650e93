"""Recall no longer offers as current a statement that a later statement of its field
replaced, or whose field the subject asked to forget (`recall.replaced`), read from the
ledger's proposals: reversible by a rejection."""

from __future__ import annotations

from uuid import UUID

from factledger.application.ledger.commands import ApproveChange, ProposeChange, RejectChange
from factledger.application.memory.record_ids import transcript_document_id
from factledger.application.memory.types import HitKind, SearchHit
from factledger.application.proposals.plan import change_id_for
from factledger.application.recall.ledger_forget_source import mask_of
from factledger.application.recall.replaced import replaced_statements, without_replaced
from factledger.domain.provenance import Evidence, Operation, Origin
from factledger.domain.transcript import Role
from factledger.domain.values import ListValue
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, TENANT, Rig, day
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
    # The earlier statement is current again; the rejected one's own sentence is withheld.
    (rejected,) = replaced_statements(rig.subject(lead))
    assert rejected.document_id == transcript_document_id(lead, "s2")
    assert rejected.current == ()


async def test_a_rejected_proposals_own_sentence_leaves_recall(rig: Rig) -> None:
    lead = rig.register()
    text = "I think our budget was 150k? Or maybe that was last year."
    await says(rig, lead, "s1", text, ("budget", "150k"))
    await says(rig, lead, "s2", "Globex supplies us.", ("supplier", "Globex"))
    proposal = change_id_for(lead, "s1", MODEL, "budget")
    own = hit(lead, "s1", "thinks their budget was 150k? or maybe that was last year")
    other = hit(lead, "s2", "Globex supplies them")
    mask = mask_of(rig.subject(lead))
    assert without_replaced([own, other], mask.replaced) == [own, other]

    rig.ledger.reject_change(RejectChange(TENANT, lead, proposal, REVIEWER, "a question"))
    mask = mask_of(rig.subject(lead))
    assert without_replaced([own, other], mask.replaced) == [other]


async def two_fields_said(rig: Rig, lead: UUID) -> tuple[SearchHit, SearchHit]:
    """In s1, one sentence states the employer and the supplier; the memories of the whole
    sentence and of its employer part."""
    sentence = "I'm head of ops at Acme, and we buy from Initech."
    await says(rig, lead, "s1", sentence, ("supplier", "Initech"), ("employer", "Acme"))
    whole = hit(lead, "s1", "is head of ops at Acme, and they buy from Initech")
    return whole, hit(lead, "s1", "is head of ops at Acme")


async def test_a_sentence_that_states_another_standing_field_loses_only_the_old_value(
    rig: Rig,
) -> None:
    lead = rig.register()
    whole, employer = await two_fields_said(rig, lead)
    await says(rig, lead, "s2", "Globex now.", ("supplier", "Globex"))

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


async def test_two_replaced_sentences_of_one_message_retire_the_memory_that_holds_both(
    rig: Rig,
) -> None:
    lead = rig.register()
    text = "We could go to 440 at most. We buy from Initech for now."
    facts = (("budget", "could go to 440 at most"), ("supplier", "Initech for now"))
    await says(rig, lead, "s1", text, *facts)
    await says(rig, lead, "s2", "500 now, and Globex.", ("budget", "500"), ("supplier", "Globex"))

    memory = hit(lead, "s1", "could go to 440 at most, buys from Initech for now")
    assert without_replaced([memory], replaced_statements(rig.subject(lead))) == []


async def forget_asked(rig: Rig, lead: UUID, session: str, field: str, *lines: str) -> UUID:
    """The subject says `lines` (by default only the request) in a session of its own, the
    last one asking to forget `field`: a pending request."""
    lines = lines or ("Please delete that.",)
    request, index = lines[-1], len(lines) - 1
    at = day(4, 2 + len(rig.subject(lead).sessions))  # as `says` dates its sessions
    rig.record(lead, session, at, *((Role.SUBJECT, line) for line in lines))
    subject = rig.subject(lead)
    command = ProposeChange(
        TENANT,
        lead,
        field,
        Operation.FORGET,
        None,
        Origin.STATED,
        MODEL,
        subject.profile_version,
        Evidence(session, index, request),
    )
    rig.ledger.propose_change(command)
    (change,) = [c for c in rig.subject(lead).changes.values() if c.operation is Operation.FORGET]
    return change.change_id


async def test_a_pending_request_to_forget_withholds_what_was_said_of_the_field_until_rejected(
    rig: Rig,
) -> None:
    lead = rig.register()
    whole, employer = await two_fields_said(rig, lead)
    request = await forget_asked(rig, lead, "s2", "supplier")

    mask = mask_of(rig.subject(lead))
    assert not mask.empty
    assert [r.field for r in mask.replaced] == ["supplier"]
    # The other field's part of the sentence stays; the asked field's words go.
    assert without_replaced([whole, employer], mask.replaced) == [employer]

    rig.ledger.reject_change(RejectChange(TENANT, lead, request, REVIEWER, "not asked"))
    assert replaced_statements(rig.subject(lead)) == ()


async def test_a_request_to_forget_leaves_a_confirmed_value_until_it_is_decided(
    rig: Rig,
) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "We buy from Initech.", ("supplier", "Initech"))
    (supplier,) = rig.subject(lead).changes
    rig.ledger.approve_change(ApproveChange(TENANT, lead, supplier, REVIEWER.id))
    await forget_asked(rig, lead, "s2", "supplier")
    assert replaced_statements(rig.subject(lead)) == ()


async def test_after_a_request_to_forget_a_later_statement_replaces_as_before(rig: Rig) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "We buy from Initech.", ("supplier", "Initech"))
    await forget_asked(rig, lead, "s2", "supplier")
    await says(rig, lead, "s3", "Globex now.", ("supplier", "Globex"))
    await says(rig, lead, "s4", "Umbrella from today.", ("supplier", "Umbrella"))
    replaced = replaced_statements(rig.subject(lead))
    withheld = {(r.document_id, r.current) for r in replaced}
    assert withheld == {
        (transcript_document_id(lead, "s1"), ()),
        (transcript_document_id(lead, "s3"), ("Umbrella",)),
    }


async def test_a_removed_list_items_memory_leaves_recall_unless_it_states_an_item_still_held(
    rig: Rig,
) -> None:
    lead = rig.register()
    await says(
        rig,
        lead,
        "s1",
        "We also look at Lumenly and Quarry.",
        ("competitor", "Lumenly"),
        ("competitor", "Quarry"),
    )
    await says(rig, lead, "s2", "Lumenly is out, their demo was rough.")
    removal = ProposeChange(
        TENANT,
        lead,
        "competitors",
        Operation.REMOVE,
        ListValue(("Lumenly",)),
        Origin.STATED,
        REVIEWER,
        based_on_version=0,
        evidence=Evidence("s2", 0, "Lumenly is out, their demo was rough."),
    )
    rig.ledger.propose_change(removal)

    only_the_removed = hit(lead, "s1", "also looks at Lumenly")
    with_a_held_one = hit(lead, "s1", "also looks at Lumenly and Quarry")
    the_removal_itself = hit(lead, "s2", "Lumenly is out, their demo was rough")
    hits = [only_the_removed, with_a_held_one, the_removal_itself]
    assert without_replaced(hits, mask_of(rig.subject(lead)).replaced) == hits[1:]

    # Rejecting the removal gives the memory back, and withholds the rejected sentence's own
    # (ADR 0142's rule for any rejected proposal).
    rig.ledger.reject_change(RejectChange(TENANT, lead, removal.change_id, REVIEWER, "wrong"))
    assert without_replaced(hits, mask_of(rig.subject(lead)).replaced) == hits[:2]
