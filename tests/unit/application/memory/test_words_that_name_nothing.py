"""ADR 0046: spoken fillers and phrases of when key neither queries nor facts, so the words
that name the answer keep the query's weight."""

from __future__ import annotations

import pytest

from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.lexical import (
    SPOKEN_FILLERS,
    coverage,
    document_frequency,
    idf_weights,
    lexical_terms,
    query_terms,
)


@pytest.mark.parametrize("word", sorted(SPOKEN_FILLERS))
def test_a_spoken_filler_keys_neither_queries_nor_facts(word: str) -> None:
    assert word not in query_terms(f"So, {word}, where do they live?")
    assert word not in lexical_terms("moved to Lucca", f"{word}, I moved to Lucca", None)


@pytest.mark.parametrize(
    "phrase", ["these days", "at the moment", "at present", "at the minute", "right now"]
)
def test_a_phrase_of_when_goes_but_its_words_alone_stay(phrase: str) -> None:
    assert query_terms(f"Where is she based {phrase}?") == [fold_inflection("based")]
    assert "day" in query_terms("Which day is the delivery?")
    assert "right" in query_terms("Is the right size in stock?")


def test_a_filler_no_longer_dilutes_the_word_that_names_the_answer() -> None:
    facts = [set(lexical_terms("moved to Lucca", "", None, "location")), {"pet", "cat"}]

    def lift(question: str) -> float:
        # Asked with the topic the asked-topic head reads in it (ADR 0098).
        terms = query_terms(question, "location")
        weights = idf_weights(terms, document_frequency(terms, facts), len(facts))
        return coverage(terms, weights, facts[0])

    assert lift("Um, okay, which town, uh?") == lift("Which town?") > 0.0
