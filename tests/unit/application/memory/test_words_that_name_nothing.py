"""ADR 0046: words and phrases of when key neither queries nor facts, so the words that name
the answer keep the query's weight. ADR 0108: spoken fillers are keywords like any other
word; the asked topic's keyword (ADR 0098) keeps a spoken question's answer ahead."""

from __future__ import annotations

import pytest

from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.lexical import (
    WHEN_WORDS,
    coverage,
    document_frequency,
    idf_weights,
    lexical_terms,
    query_terms,
)


@pytest.mark.parametrize("word", sorted(WHEN_WORDS))
def test_a_word_of_when_keys_neither_queries_nor_facts(word: str) -> None:
    assert word not in query_terms(f"Where do they live {word}?")
    assert word not in lexical_terms("moved to Lucca", f"I live in Lucca {word}", None)


@pytest.mark.parametrize(
    "phrase", ["these days", "at the moment", "at present", "at the minute", "right now"]
)
def test_a_phrase_of_when_goes_but_its_words_alone_stay(phrase: str) -> None:
    assert query_terms(f"Where is she based {phrase}?") == [fold_inflection("based")]
    assert "day" in query_terms("Which day is the delivery?")
    assert "right" in query_terms("Is the right size in stock?")


def test_a_spoken_question_keeps_its_answer_ahead_by_the_asked_topic() -> None:
    facts = [set(lexical_terms("moved to Lucca", "", None, "location")), {"pet", "cat"}]

    def lift(question: str, fact: set[str]) -> float:
        # Asked with the topic the asked-topic head reads in it (ADR 0098).
        terms = query_terms(question, "location")
        weights = idf_weights(terms, document_frequency(terms, facts), len(facts))
        return coverage(terms, weights, fact)

    spoken = "Um, okay, which town, uh?"
    assert "okay" in query_terms(spoken)  # a filler is a word like any other
    assert lift(spoken, facts[0]) > lift(spoken, facts[1]) == 0.0
    assert lift(spoken, facts[0]) < lift("Which town?", facts[0])  # it dilutes, and no more
