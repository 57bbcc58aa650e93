"""A stated change keeps the hedge or condition of the whole sentence it quotes.

The domain holds the rule; whether a sentence is tentative is read by the caller's
`TentativeReader` (the learned one is tested in `tests/unit/adapters/judgement`). Here a
reader that knows a fixed set of sentences stands for it, so each case says exactly what
the rule does with a tentative and a plain sentence.
"""

from __future__ import annotations

from uuid import uuid4

import pytest

from factledger.domain.errors import HedgeDroppedError
from factledger.domain.hedges import hedge_dropped, sentences_around
from factledger.domain.proposal import Proposal
from factledger.domain.provenance import Evidence, Operation, Origin
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, TextValue
from factledger.testing.subject_builders import FINGERPRINT_KEY, MODEL, T0, session

HEDGED = "Maybe we will buy next quarter, if the board signs off. We use Supplier C."
TENTATIVE = {"Maybe we will buy next quarter, if the board signs off."}


class Reads:
    """A reader that finds exactly the sentences in `TENTATIVE` tentative, and notes what it
    was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, sentence: str) -> bool:
        self.asked.append(sentence)
        return sentence in TENTATIVE


def intent(quote: str, condition: str | None, *, origin: Origin = Origin.STATED) -> Proposal:
    return Proposal(
        change_id=uuid4(),
        field="purchase_intent",
        operation=Operation.SET,
        value=TextValue("buy next quarter"),
        origin=origin,
        proposed_by=MODEL,
        based_on_version=0,
        evidence=Evidence("s2", 1, quote),
        condition=condition,
    )


@pytest.fixture
def hedged(subject: Subject) -> Subject:
    subject.record_session(session("s2", HEDGED), at=T0, fingerprint_key=FINGERPRINT_KEY)
    return subject


def test_a_quote_cut_out_of_a_tentative_sentence_without_a_condition_is_refused(
    hedged: Subject,
) -> None:
    reader = Reads()
    with pytest.raises(HedgeDroppedError) as refused:
        hedged.propose(intent("will buy next quarter", None), OPEN_SCHEMA, at=T0, tentative=reader)
    assert refused.value.field == "condition"
    # The whole sentence around the quote is what is read, not the quote alone.
    assert reader.asked == ["Maybe we will buy next quarter, if the board signs off."]


def test_the_condition_carries_the_tentative_sentence(hedged: Subject) -> None:
    change = intent("will buy next quarter", "if the board signs off")
    assert hedged.propose(change, OPEN_SCHEMA, at=T0, tentative=Reads()) is True


def test_a_plain_sentence_next_to_a_tentative_one_needs_no_condition(hedged: Subject) -> None:
    change = intent("We use Supplier C", None)
    assert hedged.propose(change, OPEN_SCHEMA, at=T0, tentative=Reads()) is True


def test_an_inference_is_not_held_to_the_quoted_words(hedged: Subject) -> None:
    reader = Reads()
    change = intent("will buy next quarter", None, origin=Origin.INFERRED)
    assert hedged.propose(change, OPEN_SCHEMA, at=T0, tentative=reader) is True
    assert reader.asked == []


def test_without_a_reader_the_rule_is_not_checked(hedged: Subject) -> None:
    assert hedged.propose(intent("will buy next quarter", None), OPEN_SCHEMA, at=T0) is True


@pytest.mark.parametrize(
    ("sentence", "condition", "dropped"),
    [
        ("Maybe we will buy next quarter, if the board signs off.", None, True),
        (
            "Maybe we will buy next quarter, if the board signs off.",
            "if the board signs off",
            False,
        ),
        ("We use Supplier C.", None, False),
        ("", None, False),
    ],
)
def test_what_the_rule_calls_a_dropped_hedge(
    sentence: str, condition: str | None, dropped: bool
) -> None:
    assert hedge_dropped(sentence, condition, Reads()) is dropped


def test_the_whole_sentence_around_a_quote_is_read() -> None:
    text = "Hi there. Perhaps we expand to Spain next year. Thanks!"
    assert sentences_around(text, "expand to Spain") == "Perhaps we expand to Spain next year."
    assert (
        sentences_around(text, "there. Perhaps")
        == "Hi there. Perhaps we expand to Spain next year."
    )
    assert sentences_around(text, "Lisbon") == ""


@pytest.mark.parametrize(
    ("text", "quote", "around"),
    [
        (
            "My email is anna2@example.com. Thanks!",
            "anna2@example.com",
            "My email is anna2@example.com.",
        ),
        ("We might move to 8.3.1 soon; not sure.", "8.3.1", "We might move to 8.3.1 soon;"),
        ("Perhaps 4.5m at most. Ok", "4.5m", "Perhaps 4.5m at most."),
        ("Wait... maybe at 9.30?! fine", "9.30", "maybe at 9.30?!"),
        ("See example.com\nmaybe later", "maybe", "maybe later"),
    ],
)
def test_a_sentence_never_ends_inside_a_word(text: str, quote: str, around: str) -> None:
    """A full stop inside an address, a version, an amount or a time ends no sentence; one
    before a space, a line break or the end does (ADR 0180)."""
    assert sentences_around(text, quote) == around
