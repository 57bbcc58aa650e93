"""ADR 0040: what memories mode's keyword lift counts: sibling facts' words, words of when,
and query words that no searched fact holds."""

from __future__ import annotations

import math

import pytest

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.lexical import (
    UNHELD_WEIGHT,
    coverage,
    document_frequency,
    extraction_terms,
    idf_weights,
    keyword_source,
    lexical_terms,
    query_terms,
)
from factledger.domain.transcript import Message, Role

TWO_THINGS = [
    Message(Role.AGENT, "Anything new?"),
    Message(Role.SUBJECT, "I'm allergic to peanuts. My favourite hobby is sailing."),
    Message(Role.SUBJECT, "We ship with DPD."),
]
ALLERGY = ExtractedFact("f0", "is allergic to peanuts", "allergy:peanuts", (1,))
HOBBY = ExtractedFact("f1", "their favourite hobby is sailing", None, (1,))
COURIER = ExtractedFact("f2", "ships with DPD", None, (2,))


def test_a_word_another_fact_of_the_same_message_says_is_that_facts_only() -> None:
    allergy, hobby, courier = extraction_terms([ALLERGY, HOBBY, COURIER], TWO_THINGS, None)

    assert {"allergic", "peanut"} <= set(allergy)
    assert not {"allergic", "peanut"} & set(hobby)
    assert not {"favourite", "sail"} & set(allergy)
    assert {"favourite", "sail"} <= set(hobby)
    assert "dpd" in courier


def test_a_fact_alone_in_its_message_keeps_every_source_word() -> None:
    (hobby,) = extraction_terms([HOBBY], TWO_THINGS, None)

    assert {"allergic", "peanut", "sail"} <= set(hobby)
    # its source, and the question it answers (ADR 0039)
    assert hobby == lexical_terms(HOBBY.text, keyword_source(TWO_THINGS, (1,)), None)


def test_a_claimed_word_the_fact_says_itself_stays() -> None:
    terms = lexical_terms("works with Vireo", "we work with Vireo", None, claimed={"vireo"})

    assert "vireo" in terms


def test_a_query_word_no_fact_holds_weighs_a_share_of_its_idf() -> None:
    terms = ["maria", "town"]

    held, unheld = idf_weights(terms, {"town": 1}, 10)[1], idf_weights(terms, {"town": 1}, 10)[0]

    assert unheld == pytest.approx(UNHELD_WEIGHT * math.log(1.0 + 10.5 / 0.5))
    assert held == pytest.approx(math.log(1.0 + 9.5 / 1.5))
    assert 0.0 < UNHELD_WEIGHT < 1.0


def test_a_name_no_fact_holds_takes_less_of_the_query_than_before() -> None:
    facts = [set(lexical_terms("moved to Lucca", "", None, "location")), {"pet", "cat"}]
    # The topic the question asks about, as the asked-topic head reads it (ADR 0098).
    terms = query_terms("Where is Maria based these days?", "location")
    weights = idf_weights(terms, document_frequency(terms, facts), len(facts))
    full = [
        w / UNHELD_WEIGHT if t in {fold_inflection("maria")} else w
        for t, w in zip(terms, weights, strict=True)
    ]

    assert coverage(terms, weights, facts[0]) > coverage(terms, full, facts[0]) > 0.0
    assert coverage(terms, weights, facts[1]) == 0.0
