"""A request to forget that says what replaces the held value proposes that value (ADR 0151):
read for held single-valued fields only, quoting only the value's words, never the request
sentence, and only where the rest of the session proposed nothing for the field."""

from __future__ import annotations

import re
from uuid import UUID

from factledger.application.ledger.commands import ApproveChange
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.record_ids import namespace_for
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus, Operation
from factledger.domain.transcript import Role
from factledger.domain.values import TextValue

from .conftest import MODEL, TENANT, Rig, day
from .test_forget_requests_said import PhraseJudge

AGENT, LEAD = Role.AGENT, Role.SUBJECT
REVIEWER = Actor(ActorKind.STAFF, "rev-1")
REPLACED = "Please delete the 40k I mentioned, our budget is 55k now."
_STATES = re.compile(r"(\w+) is (\w+)")


class StatesExtractor:
    """Reads "<slot> is <value>" in the subject's lines, for the asked fields' slots (the
    learned extractor reads a request sentence as any other; its own tests are the adapter's)."""

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        slots = {f.slot for f in request.fields}
        return [
            ExtractedFact(f"f{i}.{n}", m.group(0), m.group(1), (i,), value=m.group(2))
            for i, line in enumerate(request.transcript)
            if line.role is LEAD
            for n, m in enumerate(_STATES.finditer(line.text))
            if m.group(1) in slots
        ]


def worker(rig: Rig, *, replacements: bool) -> SyncWorker:
    judge = PhraseJudge()
    feed = LedgerEventFeed(rig.ledger)
    proposer = SessionProposer(
        rig.ledger, StatesExtractor(), MODEL, judge=judge, replacements_in_requests=replacements
    )
    ports = SyncPorts(rig.store, feed, feed, rig.backend, proposer=proposer, judge=judge)
    return SyncWorker(ports, SyncOptions(backoff_s=0.0))


async def _with_budget(rig: Rig) -> UUID:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "What can you spend?"), (LEAD, "Our budget is 40k."))
    await worker(rig, replacements=True).run_once()
    (budget,) = [c for c in rig.subject(lead).changes.values() if c.field == "budget"]
    rig.ledger.approve_change(ApproveChange(TENANT, lead, budget.change_id, REVIEWER.id))
    return lead


async def _said(rig: Rig, lead: UUID, *lines: str, replacements: bool = True) -> None:
    rig.record(lead, "s2", day(4, 3), (AGENT, "Anything else?"), *((LEAD, t) for t in lines))
    await worker(rig, replacements=replacements).run_once()


def _set_in_s2(rig: Rig, lead: UUID) -> list[ChangeRecord]:
    return [
        c
        for c in rig.subject(lead).changes.values()
        if c.operation is Operation.SET
        and c.proposal.evidence is not None
        and c.proposal.evidence.session_id == "s2"
    ]


async def test_the_value_a_request_says_replaces_the_held_one_is_proposed(rig: Rig) -> None:
    lead = await _with_budget(rig)
    await _said(rig, lead, f"We are still deciding. {REPLACED}")
    (update,) = _set_in_s2(rig, lead)
    assert update.field == "budget"
    assert update.status is ChangeStatus.PENDING
    assert isinstance(update.proposal.value, TextValue)
    assert "55k" in update.proposal.value.value
    assert update.proposal.evidence is not None
    assert update.proposal.evidence.message_index == 1
    # The request itself is still noticed and placed.
    forgets = [c for c in rig.subject(lead).changes.values() if c.operation is Operation.FORGET]
    assert [c.field for c in forgets] == ["budget"]


async def test_the_update_quotes_the_value_never_the_request_sentence(rig: Rig) -> None:
    lead = await _with_budget(rig)
    await _said(rig, lead, f"We are still deciding. {REPLACED}")
    (update,) = _set_in_s2(rig, lead)
    assert update.proposal.evidence is not None
    quote = update.proposal.evidence.quote
    assert "55k" in quote
    assert "Please delete" not in quote
    assert "40k" not in quote
    memories = await rig.backend.list_memories(namespace_for(lead))
    assert not any("Please delete" in m.text for m in memories)


async def test_off_the_request_sentence_proposes_no_value(rig: Rig) -> None:
    lead = await _with_budget(rig)
    await _said(rig, lead, f"We are still deciding. {REPLACED}", replacements=False)
    assert _set_in_s2(rig, lead) == []


async def test_a_request_naming_only_the_held_value_proposes_no_value(rig: Rig) -> None:
    lead = await _with_budget(rig)
    await _said(rig, lead, "Please delete what I said, our budget is 40k.")
    assert _set_in_s2(rig, lead) == []


async def test_the_rest_of_the_session_says_the_field_first(rig: Rig) -> None:
    lead = await _with_budget(rig)
    await _said(rig, lead, "Our budget is 60k.", REPLACED)
    (update,) = _set_in_s2(rig, lead)
    assert isinstance(update.proposal.value, TextValue)
    assert "60k" in update.proposal.value.value


async def test_a_field_the_subject_does_not_hold_is_not_read_in_a_request(rig: Rig) -> None:
    lead = await _with_budget(rig)
    await _said(rig, lead, "Please delete the 40k I mentioned, our timeline is Q3.")
    assert [c.field for c in _set_in_s2(rig, lead)] == []
