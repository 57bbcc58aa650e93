"""While a request to forget is pending, recall withholds the memories said before it that its
sentence speaks of, whatever field the request was placed on (`recall.requested`)."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from factledger.application.ledger.commands import ApproveChange, ProposeChange, RejectChange
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
