"""A list field's proposal quotes every item its line said (ADR 0177)."""

from __future__ import annotations

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.proposals.candidates import candidates_from
from factledger.application.proposals.schema import FieldFeed, KindFeeds
from factledger.domain.transcript import Message, Role
from factledger.domain.values import ValueType

FEEDS = KindFeeds((FieldFeed("allergies", ValueType.LIST, ("allergies",)),))


def item(key: str, value: str, line: int) -> ExtractedFact:
    return ExtractedFact(key, f"allergic to {value}", "allergies", (line,), value=value)


def test_the_quote_runs_over_every_sentence_holding_an_item_of_its_line() -> None:
    said = "Penicillin, I break out in hives. Nothing else really. Oh, and latex gloves."
    transcript = (Message(Role.SUBJECT, said),)

    (candidate,) = candidates_from(
        (item("a", "Penicillin", 0), item("b", "latex", 0)), transcript, FEEDS, "s-1"
    )

    assert candidate.values == ("Penicillin", "latex")
    assert candidate.evidence is not None
    assert candidate.evidence.quote == said


def test_an_item_said_in_another_line_stays_out_of_the_quote() -> None:
    transcript = (
        Message(Role.SUBJECT, "Penicillin, I break out in hives. Nothing else."),
        Message(Role.AGENT, "Anything else?"),
        Message(Role.SUBJECT, "Latex, I think."),
    )

    (candidate,) = candidates_from(
        (item("a", "Penicillin", 0), item("b", "Latex", 2)), transcript, FEEDS, "s-1"
    )

    assert candidate.evidence is not None
    assert candidate.evidence.message_index == 0
    assert candidate.evidence.quote == "Penicillin, I break out in hives."
