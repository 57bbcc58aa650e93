"""A request to forget that names some items of a list field asks to forget those items
(ADR 0160): approving it keeps the others in the profile, and the sync takes the field's
memories as for any forget of the field."""

from __future__ import annotations

from uuid import UUID

import pytest

from factledger.application.ledger.commands import ApproveChange, ProposeChange, RejectChange
from factledger.application.memory.record_ids import namespace_for
from factledger.application.recall.ledger_forget_source import mask_of
from factledger.application.recall.ledger_sources import open_entries
from factledger.application.recall.questions import question_text
from factledger.application.review.forget_requests import named_items
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import (
    Actor,
    ActorKind,
    ChangeStatus,
    Evidence,
    Operation,
    Origin,
)
from factledger.domain.transcript import Role
from factledger.domain.values import ListValue

from .conftest import MODEL, TENANT, Rig, day
from .test_forget_requests_said import PhraseJudge, worker

AGENT, LEAD = Role.AGENT, Role.SUBJECT
REVIEWER = Actor(ActorKind.STAFF, "rev-1")
NAMED = "We mostly lose deals to Acme Ltd, Vatly Ltd and Zorb."


HELD = ("Acme Ltd", "Vatly Ltd", "Zorb")


@pytest.mark.parametrize(
    ("sentence", "named"),
    [
        ("Please take Vatly off whatever notes you have.", ("Vatly Ltd",)),
        ("Please forget Vatly Ltd and Zorb.", ("Vatly Ltd", "Zorb")),
        # A word every item shares names none of them; the field as a whole is asked.
        ("Please forget the Ltd ones.", ()),
        ("Please forget all of them: Acme, Vatly and Zorb.", ()),
        ("Please forget who we compete with.", ()),
    ],
)
def test_the_items_a_request_names(sentence: str, named: tuple[str, ...]) -> None:
    assert named_items(sentence, HELD) == named


def test_a_field_holding_one_item_or_none_is_asked_whole() -> None:
    assert named_items("Please forget Acme.", ("Acme",)) == ()
    assert named_items("Please forget Acme.", ()) == ()


def _proposed(
    rig: Rig, lead: UUID, operation: Operation, items: tuple[str, ...], quote: Evidence
) -> UUID:
    """A stated change of `competitors` proposed by the model, quoting `quote`."""
    change = ProposeChange(
        TENANT,
        lead,
        "competitors",
        operation,
        ListValue(items),
        Origin.STATED,
        MODEL,
        rig.subject(lead).profile_version,
        evidence=quote,
    )
    rig.ledger.propose_change(change)
    return change.change_id


async def _competing(rig: Rig) -> UUID:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "Who do you lose deals to?"), (LEAD, NAMED))
    listed = _proposed(rig, lead, Operation.SET, HELD, Evidence("s1", 1, NAMED))
    rig.ledger.approve_change(ApproveChange(TENANT, lead, listed, REVIEWER.id))
    return lead


def _requests(rig: Rig, lead: UUID) -> list[ChangeRecord]:
    return [c for c in rig.subject(lead).changes.values() if c.operation is Operation.FORGET]


async def _asks_to_forget_vatly(rig: Rig, judge: PhraseJudge, lead: UUID) -> ChangeRecord:
    """The subject asks, in a second session, to have Vatly forgotten; the request made."""
    rig.record(
        lead,
        "s2",
        day(4, 3),
        (AGENT, "Anything else?"),
        (LEAD, "Please delete Vatly from whatever notes you have."),
    )
    await worker(rig, judge).run_once()
    (request,) = _requests(rig, lead)
    return request


async def test_a_request_naming_one_item_forgets_it_and_keeps_the_others(rig: Rig) -> None:
    judge = PhraseJudge(meaning="competitors")
    lead = await _competing(rig)
    await worker(rig, judge).run_once()
    space = namespace_for(lead)
    before = await rig.backend.list_memories(space, include_superseded=True)
    assert any("Vatly" in m.text for m in before)
    request = await _asks_to_forget_vatly(rig, judge, lead)
    assert request.field == "competitors"
    assert request.proposal.value == ListValue(("Vatly Ltd",))
    assert "items of competitors" in (request.proposal.rationale or "")

    rig.ledger.approve_change(ApproveChange(TENANT, lead, request.change_id, REVIEWER.id))
    subject = rig.subject(lead)
    assert subject.fields["competitors"].value == ListValue(("Acme Ltd", "Zorb"))
    rig.expire_leases()
    await worker(rig, judge).run_once()
    memories = await rig.backend.list_memories(space, include_superseded=True)
    assert not any("Vatly" in m.text for m in memories)


async def test_a_pending_item_request_is_no_value_and_rejecting_it_keeps_the_memories(
    rig: Rig,
) -> None:
    """The request's items are what would go: recall never offers them as the field's pending
    value, the conversation plan asks about forgetting them, and declining the request
    retires no memory of them (ADR 0160)."""
    judge = PhraseJudge(meaning="competitors")
    lead = await _competing(rig)
    await worker(rig, judge).run_once()
    request = await _asks_to_forget_vatly(rig, judge, lead)
    subject = rig.subject(lead)
    (entry,) = [e for e in open_entries(subject) if e.change_id == request.change_id]
    assert entry.value is None
    assert question_text(entry) == "Should we forget Vatly Ltd from your competitors?"
    assert "competitors" not in {p.field for p in open_entries(subject) if p.value is not None}

    # The list drops Vatly meanwhile (a removal confirmed): declining the request must still
    # retire nothing, though Vatly is no value the profile keeps any more.
    rig.record(lead, "s3", day(4, 4), (LEAD, "We no longer compete with Vatly."))
    no_longer = Evidence("s3", 0, "We no longer compete with Vatly.")
    removal = _proposed(rig, lead, Operation.REMOVE, ("Vatly Ltd",), no_longer)
    rig.ledger.approve_change(ApproveChange(TENANT, lead, removal, REVIEWER.id))
    await worker(rig, judge).run_once()
    space = namespace_for(lead)
    before = sorted(m.id for m in await rig.backend.list_memories(space) if "Vatly" in m.text)
    assert before
    rig.ledger.reject_change(
        RejectChange(TENANT, lead, request.change_id, REVIEWER, "the subject changed their mind")
    )
    rig.expire_leases()
    await worker(rig, judge).run_once()
    after = await rig.backend.list_memories(space)
    assert sorted(m.id for m in after if "Vatly" in m.text) == before
    rejected = {request.change_id: rig.subject(lead).version}
    assert mask_of(rig.subject(lead), rejected).rejections == ()


async def test_a_rejected_removal_retires_no_memory_of_its_items(rig: Rig) -> None:
    """Declining "Vatly is out" keeps what was said: the sync retires memories of rejected
    values only, never those of the items a removal would have taken off (ADR 0160); recall
    still withholds the rejected sentence's own memory (ADR 0159), reversibly."""
    judge = PhraseJudge(meaning="competitors")
    lead = rig.register()
    out = "Vatly Ltd is out of the running."
    rig.record(lead, "s1", day(4, 2), (AGENT, "Who do you lose deals to?"), (LEAD, out))
    await worker(rig, judge).run_once()
    space = namespace_for(lead)
    said = [m.id for m in await rig.backend.list_memories(space) if "Vatly" in m.text]
    assert said
    removal = _proposed(rig, lead, Operation.REMOVE, ("Vatly Ltd",), Evidence("s1", 1, out))
    await worker(rig, judge).run_once()
    rig.ledger.reject_change(RejectChange(TENANT, lead, removal, REVIEWER, "still in"))
    rig.expire_leases()
    await worker(rig, judge).run_once()
    kept = {m.id for m in await rig.backend.list_memories(space)}
    assert set(said) <= kept


async def test_a_request_naming_an_item_of_a_pending_list_names_it(rig: Rig) -> None:
    """The list only proposed (no reviewer yet): the request still names the item, so the
    reviewer sees what was asked; approving it withdraws the field's pending changes, as any
    forget of the field does, and keeps nothing the profile did not hold."""
    judge = PhraseJudge(meaning="competitors")
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "Who do you lose deals to?"), (LEAD, NAMED))
    listed = _proposed(rig, lead, Operation.SET, HELD, Evidence("s1", 1, NAMED))
    await worker(rig, judge).run_once()
    rig.record(lead, "s2", day(4, 3), (LEAD, "Please delete Vatly from your files."))
    await worker(rig, judge).run_once()
    (request,) = _requests(rig, lead)
    assert request.proposal.value == ListValue(("Vatly Ltd",))

    rig.ledger.approve_change(ApproveChange(TENANT, lead, request.change_id, REVIEWER.id))
    subject = rig.subject(lead)
    assert "competitors" not in subject.fields
    assert subject.changes[listed].status is ChangeStatus.FORGOTTEN
