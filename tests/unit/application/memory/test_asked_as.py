"""The asked-about words a fact is indexed under (ADR 0036): per slot kind, per word of a
fact without a slot, and what they do to memories-mode's score."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factledger.application.memory.asked_as import ASKED_AS, RELATED, asked_as_words, related_words
from factledger.application.memory.calibration import Calibration
from factledger.application.memory.lexical import (
    coverage,
    document_frequency,
    fused_score,
    idf_weights,
    keywords,
    lexical_terms,
    query_terms,
)
from factledger.application.memory.scoring import keyword_tokens

FOOD = {"eat", "food"}  # diet and allergy are both about what one can eat


def test_a_slot_fact_is_found_by_the_words_its_kind_is_asked_with() -> None:
    terms = lexical_terms("moved to Lucca", "I have moved to Lucca.", None, "location")

    assert {"city", "town", "live", "home", "lucca"} <= set(terms)


def test_a_keyed_slot_takes_its_kinds_words_and_an_intent_or_unknown_slot_none() -> None:
    assert asked_as_words("allergy:peanuts") == asked_as_words("allergy")
    assert "intolerance" in (asked_as_words("allergy:peanuts") or "")
    assert asked_as_words("intent:open_a_store") is None
    assert asked_as_words("favourite_colour") is None
    assert asked_as_words(None) is None


def test_no_asked_word_names_two_kinds_except_the_words_of_eating() -> None:
    # Compared as search matches them: with their inflections folded (ADR 0039).
    kinds = {kind: set(keywords(words)) for kind, words in ASKED_AS.items()}

    for (a, words_a), (b, words_b) in combinations(kinds.items(), 2):
        assert words_a & words_b <= FOOD, (a, b)


def test_a_fact_without_a_slot_takes_the_words_of_the_kinds_its_own_words_name() -> None:
    terms = lexical_terms("ships with DPD", "We work with DPD for everything.", None)

    assert set(keywords("courier delivery parcels")) <= set(terms)
    # The source's "work" brings no employer's words: only the fact's own words are looked up.
    assert not set(keywords(ASKED_AS["employer"])) & set(terms)


def test_a_slot_fact_takes_its_kinds_words_not_those_of_its_own_words() -> None:
    terms = lexical_terms("works with Harbor Parcels", "", None, "supplier")

    assert "vendor" in terms
    assert "courier" not in terms


def test_words_without_an_entry_bring_nothing() -> None:
    assert related_words("Researched adoption agencies") is None
    assert set(RELATED) == {t for t in RELATED if keyword_tokens(t) == [t]}


def test_a_question_in_the_kinds_words_lifts_that_fact_and_not_another() -> None:
    facts = {
        "city": set(lexical_terms("moved to Lucca", "", None, "location")),
        "employer": set(lexical_terms("works at Globex", "", None, "employer")),
        "pet": set(lexical_terms("their cat is called Pixel", "", None)),
    }
    terms = query_terms("Which town are they in these days?")
    weights = idf_weights(terms, document_frequency(terms, list(facts.values())), len(facts))
    lift = {name: coverage(terms, weights, held) for name, held in facts.items()}

    assert lift["city"] > 0.0
    assert lift["employer"] == lift["pet"] == 0.0


@given(
    cosine=st.floats(-1.0, 1.0),
    held=st.floats(0.0, 1.0),
    more=st.floats(0.0, 1.0),
    slope=st.floats(0.5, 20.0),
    intercept=st.floats(-10.0, 10.0),
)
def test_served_relevance_never_falls_as_a_fact_holds_more_of_the_query(
    cosine: float, held: float, more: float, slope: float, intercept: float
) -> None:
    calibration = Calibration(slope=slope, intercept=intercept)
    less_held, more_held = sorted((held, more))

    assert calibration.relevance(fused_score(cosine, more_held)) >= calibration.relevance(
        fused_score(cosine, less_held)
    )


@pytest.mark.parametrize("kind", sorted(ASKED_AS))
def test_every_kinds_words_survive_as_keywords(kind: str) -> None:
    assert asked_as_words(kind)
