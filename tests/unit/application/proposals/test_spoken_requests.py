"""While a request to forget is pending, recall withholds the memories said before it that its
sentence speaks of, whatever field the request was placed on, as current notes and as history
(`recall.requested`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from uuid import UUID

from factledger.application.ledger.commands import ApproveChange, ProposeChange, RejectChange
from factledger.application.memory.types import MemoryFact
from factledger.application.recall.forget_filter import remembered
from factledger.application.recall.ledger_forget_source import mask_of
from factledger.application.recall.requested import (
    requested_changes,
    spoken_requests,
    without_requested,
)
from factledger.domain.provenance import Evidence, Operation, Origin
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.transcript import Role
from factledger.domain.values import ListValue

from .conftest import MODEL, TENANT, Rig, day
from .test_plan_by_meaning import REVIEWER
from .test_replaced_statements import forget_asked, hit, says

REQUEST = "Can you delete where I'm living now from your notes?"


async def test_a_pending_request_withholds_the_earlier_memories_it_speaks_of(rig: Rig) -> None:
    lead = rig.register()
    text = "I live with my parents in Kenwick. I work at Acme."
    await says(rig, lead, "s1", text, ("employer", "Acme"))
    # The proposer placed the request on another field than the one it speaks of.
    request = await forget_asked(rig, lead, "s2", "employer", REQUEST)

    mask = mask_of(rig.subject(lead))
    home = hit(lead, "s1", "is living with their parents in Kenwick")
    employer = hit(lead, "s1", "works at Acme")
    later = hit(lead, "s3", "is living in a rented flat in Seacliff")
    assert not mask.empty
    assert without_requested([home, employer, later], mask.requested) == [employer, later]

    # Withheld, not forgotten: a rejected request gives the memory back.
    rig.ledger.reject_change(RejectChange(TENANT, lead, request, REVIEWER, "not asked"))
    assert spoken_requests(rig.subject(lead)) == ()


async def test_the_requests_own_message_stays_and_an_earlier_one_of_its_session_goes(
    rig: Rig,
) -> None:
    lead = rig.register()
    await says(rig, lead, "s0", "I work at Acme.", ("employer", "Acme"))
    said = "I'm living with my parents for now."
    await forget_asked(rig, lead, "s1", "employer", said, f"The Rite Aid, though. {REQUEST}")

    requested = mask_of(rig.subject(lead)).requested
    earlier = hit(lead, "s1", "is living with their parents for now", index=0)
    with_it = hit(lead, "s1", "is living near the Rite Aid", index=1)
    assert without_requested([earlier, with_it], requested) == [with_it]


async def test_a_pending_value_the_request_speaks_of_is_not_offered_until_it_is_rejected(
    rig: Rig,
) -> None:
    lead = rig.register()
    text = "I do the night shift at Acme Freight."
    await says(rig, lead, "s1", text, ("employer", "night shift at Acme Freight"))
    await says(rig, lead, "s2", "Budget is 900k.", ("budget", "900k"))
    # Placed on another field than the one whose value holds what it speaks of.
    request = await forget_asked(
        rig, lead, "s3", "budget", "Please don't keep anything about my night shift."
    )

    subject = rig.subject(lead)
    by_field = {c.field: c.change_id for c in subject.changes.values()}
    assert mask_of(subject).withheld_changes == {by_field["employer"]}
    assert requested_changes(subject) == {by_field["employer"]}

    rig.ledger.reject_change(RejectChange(TENANT, lead, request, REVIEWER, "not asked"))
    assert requested_changes(rig.subject(lead)) == frozenset()


async def test_a_value_said_after_the_request_or_with_it_stays_offered(rig: Rig) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "Budget is 900k.", ("budget", "900k"))
    said = "I work nights at Acme."
    await forget_asked(rig, lead, "s2", "budget", said, "Please forget where I work nights.")
    await says(rig, lead, "s3", "I work at Initech now.", ("employer", "Initech"))
    subject = rig.subject(lead)
    assert [c.field for c in subject.changes.values()] == ["budget", "budget", "employer"]
    assert requested_changes(subject) == frozenset()


@dataclass(frozen=True)
class Trace:
    """A memory as the sync's rule reads it: its slot and the line it was drawn from."""

    slot: str | None
    document_id: str | None
    source_indexes: tuple[int, ...]


async def _said_asked(rig: Rig, lead: UUID, request: str, *lines: str) -> UUID:
    """A pending request to forget what was said (ADR 0174) in session s9, naming `lines`."""
    rig.record(lead, "s9", day(4, 9), (Role.SUBJECT, request))
    command = ProposeChange(
        TENANT,
        lead,
        SAID_LINES,
        Operation.FORGET_SAID,
        ListValue(lines),
        Origin.STATED,
        MODEL,
        rig.subject(lead).profile_version,
        Evidence("s9", 0, request),
    )
    rig.ledger.propose_change(command)
    return command.change_id


async def test_a_request_to_forget_what_was_said_withholds_its_lines_whatever_their_words(
    rig: Rig,
) -> None:
    lead = rig.register()
    await says(rig, lead, "s0", "I work at Acme.", ("employer", "Acme"))
    await says(rig, lead, "s1", "Dev and I split up.")
    request = await _said_asked(rig, lead, "Please drop the thing about him.", line_ref("s1", 0))

    named = hit(lead, "s1", "is no longer with their partner Dev")  # no word of the request
    other = hit(lead, "s0", "works at Acme")
    assert without_requested([named, other], mask_of(rig.subject(lead)).requested) == [other]

    rig.ledger.approve_change(ApproveChange(TENANT, lead, request, REVIEWER.id))
    mask = mask_of(rig.subject(lead))
    assert mask.requested == ()
    # Forgotten now, by the line it was drawn from; the other session's memory stays.
    assert mask.forgets(Trace(None, named.document_id, (0,)), named.id, provenance=True)
    assert not mask.forgets(Trace(None, other.document_id, (0,)), other.id, provenance=True)


async def test_what_a_pending_request_speaks_of_is_no_history_either(rig: Rig) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "We buy our boxes from Initech.", ("supplier", "Initech"))
    await forget_asked(
        rig,
        lead,
        "s2",
        "supplier",
        "We buy our boxes from Globex now.",
        "Remove Initech from my file please.",
    )
    requested = mask_of(rig.subject(lead)).requested

    # The superseded memory would be a current note's "previously ...": withheld as well.
    superseded = replace(hit(lead, "s1", "buys their boxes from Initech"), is_latest=False)
    new_value = hit(lead, "s2", "buys their boxes from Globex now")
    # Said with the request, and naming what it speaks of as what was before.
    repeating = hit(lead, "s2", f"{new_value.text}, previously from Initech")
    # A "previously" of something else, said with the request, stays.
    unrelated = hit(lead, "s2", "has a new warehouse, previously rented a unit in Leeds")
    kept = without_requested([superseded, new_value, repeating, unrelated], requested)
    assert kept == [new_value, unrelated]


async def test_a_superseded_memory_read_by_id_is_not_shown_while_a_request_speaks_of_it(
    rig: Rig,
) -> None:
    lead = rig.register()
    await says(rig, lead, "s1", "I work at Acme, desk 4471.", ("employer", "Acme"))
    await says(rig, lead, "s2", "Budget is 900k.", ("budget", "900k"))
    request = await forget_asked(
        rig, lead, "s3", "employer", "Please don't keep desk 4471, it goes to someone else."
    )

    def memory(session: str, text: str) -> MemoryFact:
        said = hit(lead, session, text)
        return MemoryFact(
            said.id, text, None, False, False, False, None, said.document_id, source_indexes=(0,)
        )

    old_number = memory("s1", "works at Acme at desk 4471")
    old_budget = memory("s2", "budget is 900k")
    mask = mask_of(rig.subject(lead))
    assert not remembered(old_number, mask, provenance=True, slots=False)
    assert remembered(old_budget, mask, provenance=True, slots=False)

    # Rejected, the request gives the history back.
    rig.ledger.reject_change(RejectChange(TENANT, lead, request, REVIEWER, "not asked"))
    assert remembered(old_number, mask_of(rig.subject(lead)), provenance=True, slots=False)
