"""The conversation plan asks only sensible questions: nothing a later statement superseded,
and no inference (a risk, a sentiment, a score) put to the subject; those go to reviewers."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from factledger.application.recall.askable import askable
from factledger.application.recall.build import LedgerFindings, proposal_notes
from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.domain.provenance import Operation
from factledger.domain.transcript import Channel

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
APR = datetime(2026, 4, 12, 9, 0, tzinfo=UTC)
PROPOSED = datetime(2026, 4, 20, 9, 0, tzinfo=UTC)  # both proposals recorded after April
SESSIONS = {
    "jan": SessionDigest("jan", Channel.VOICE, JAN),
    "apr": SessionDigest("apr", Channel.VOICE, APR),
}


def open_(
    value: str | None,
    session: str,
    *,
    field: str = "supplier",
    inferred: bool = False,
    operation: Operation = Operation.SET,
) -> OpenProposal:
    return OpenProposal(
        change_id=uuid.uuid4(),
        field=field,
        value=value,
        condition=None,
        inferred=inferred,
        proposed_at=PROPOSED,
        evidence_session=session,
        operation=Operation.UNSET if value is None else operation,
    )


def confirmed(value: str, session: str, *, field: str = "supplier") -> ProfileEntry:
    return ProfileEntry(field, value, None, False, PROPOSED, session)


def test_a_value_a_later_proposal_replaces_is_not_asked() -> None:
    old, new = open_("Supplier A", "jan"), open_("Supplier B", "apr")
    assert askable([old, new], [], SESSIONS) == [new]


def test_a_later_removal_supersedes_the_value() -> None:
    old, left = open_("Supplier A", "jan"), open_(None, "apr")
    assert askable([old, left], [], SESSIONS) == [left]


def test_a_value_the_profile_confirmed_later_replaces_is_not_asked() -> None:
    old = open_("Supplier A", "jan")
    assert askable([old], [confirmed("Supplier B", "apr")], SESSIONS) == []


def test_the_same_value_said_again_later_supersedes_nothing() -> None:
    old = open_("12000", "jan", field="budget")
    again = open_("12,000", "apr", field="budget")
    assert askable([old, again], [confirmed("12 000", "apr", field="budget")], SESSIONS) == [
        old,
        again,
    ]


def test_an_earlier_statement_does_not_supersede_a_later_one() -> None:
    new = open_("Supplier B", "apr")
    assert askable([new], [confirmed("Supplier A", "jan")], SESSIONS) == [new]


def test_another_fields_statement_supersedes_nothing() -> None:
    plan = open_("Pro", "jan", field="plan")
    assert askable([plan], [confirmed("Supplier B", "apr")], SESSIONS) == [plan]


def test_extensions_of_a_list_do_not_supersede_each_other() -> None:
    first = open_("late deliveries", "jan", field="complaints", operation=Operation.APPEND)
    second = open_("pricing", "apr", field="complaints", operation=Operation.APPEND)
    listed = confirmed("billing", "apr", field="complaints")
    assert askable([first, second], [listed], SESSIONS) == [first, second]


def test_an_extension_a_later_removal_of_the_list_superseded_is_not_asked() -> None:
    first = open_("late deliveries", "jan", field="complaints", operation=Operation.APPEND)
    cleared = open_(None, "apr", field="complaints")
    assert askable([first, cleared], [], SESSIONS) == [cleared]


def test_an_unknown_session_is_dated_by_the_proposal() -> None:
    undated = open_("Supplier A", "gone")  # proposed in April, after the January statement
    assert askable([undated], [confirmed("Supplier B", "jan")], SESSIONS) == [undated]


def test_inferences_go_to_reviewers_only() -> None:
    risk = open_("high", "apr", field="churn_risk", inferred=True)
    said = open_("Pro", "apr", field="plan")
    assert askable([risk, said], [], SESSIONS) == [said]


def test_the_plan_lists_only_the_askable_proposals() -> None:
    risk = open_("high", "apr", field="churn_risk", inferred=True)
    old, new = open_("Supplier A", "jan"), open_("Supplier B", "apr")
    findings = LedgerFindings(proposals=[risk, old, new], sessions=dict(SESSIONS))
    notes = proposal_notes(findings)
    assert [n.origin.ref for n in notes] == [str(new.change_id)]
    assert notes[0].question == "Is it right that your supplier is Supplier B?"
