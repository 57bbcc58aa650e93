"""A stated change keeps the hedges and conditions of the whole sentence it quotes."""

from __future__ import annotations

from uuid import uuid4

import pytest

from factledger.domain.errors import HedgeDroppedError
from factledger.domain.hedges import dropped_markers, markers_in, sentences_around
from factledger.domain.proposal import Proposal
from factledger.domain.provenance import Evidence, Operation, Origin
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, TextValue
from factledger.testing.subject_builders import MODEL, T0, session

HEDGED = "Maybe we will buy next quarter, if the board signs off. We use Supplier C."


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
    subject.record_session(session("s2", HEDGED), at=T0)
    return subject


def test_a_quote_cut_out_of_a_hedged_sentence_without_its_condition_is_refused(
    hedged: Subject,
) -> None:
    with pytest.raises(HedgeDroppedError) as refused:
        hedged.propose(intent("will buy next quarter", None), OPEN_SCHEMA, at=T0)
    assert refused.value.words == ("if",)
    assert "'if'" in str(refused.value)


def test_the_condition_clause_carries_the_hedged_sentence(hedged: Subject) -> None:
    change = intent("will buy next quarter", "if the board signs off")
    assert hedged.propose(change, OPEN_SCHEMA, at=T0) is True


def test_a_hedge_in_the_condition_does_not_stand_for_a_dropped_clause(hedged: Subject) -> None:
    with pytest.raises(HedgeDroppedError) as refused:
        hedged.propose(intent("will buy next quarter", "maybe"), OPEN_SCHEMA, at=T0)
    assert refused.value.words == ("if",)


def test_a_plain_sentence_next_to_a_hedged_one_needs_no_condition(hedged: Subject) -> None:
    assert hedged.propose(intent("We use Supplier C", None), OPEN_SCHEMA, at=T0) is True


def test_an_inference_is_not_held_to_the_quoted_words(hedged: Subject) -> None:
    change = intent("will buy next quarter", None, origin=Origin.INFERRED)
    assert hedged.propose(change, OPEN_SCHEMA, at=T0) is True


@pytest.mark.parametrize(
    ("sentence", "condition", "dropped"),
    [
        ("We might move to Supplier D.", None, ("might",)),
        ("We might move to Supplier D.", "might", ()),
        ("Probably Supplier D, depending on the freight costs.", None, ("depending on",)),
        ("Probably Supplier D, depending on the freight costs.", "depending on freight", ()),
        ("We sign in the autumn at the earliest.", None, ("at the earliest",)),
        ("We sign unless legal objects.", "if legal agrees", ("unless",)),
        ("I wonder if they ship to Lyon; we ship weekly.", None, ()),
        ("We ship weekly.", None, ()),
    ],
)
def test_the_lexicon_names_what_a_condition_drops(
    sentence: str, condition: str | None, dropped: tuple[str, ...]
) -> None:
    assert dropped_markers(sentence, condition) == dropped


def test_the_whole_sentence_around_a_quote_is_read() -> None:
    text = "Hi there. Perhaps we expand to Spain next year. Thanks!"
    assert sentences_around(text, "expand to Spain") == "Perhaps we expand to Spain next year."
    assert markers_in(sentences_around(text, "expand to Spain")).hedges == ("perhaps",)
