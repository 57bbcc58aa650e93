"""ADR 0046: words that say nothing of the answer key neither queries nor facts, so the words
that name the answer keep the query's weight. ADR 0108: spoken fillers are keywords like any
other word; the asked topic's keyword (ADR 0098) keeps a spoken question's answer ahead.
ADR 0118: those words are the ones fitted on labelled conversations, read from the packaged,
pinned file; no hand-written word or phrase of when is left."""

from __future__ import annotations

import hashlib
import json

import pytest

from factledger.application.memory import unasked_words
from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.lexical import (
    UNASKED_WORDS,
    coverage,
    document_frequency,
    idf_weights,
    lexical_terms,
    query_terms,
)
from factledger.application.memory.unasked_words import (
    UnaskedWordsFileError,
    parse_unasked_words,
)


@pytest.mark.parametrize("word", ["now", "currently", "still", "already", "actually"])
def test_a_fitted_word_keys_neither_queries_nor_facts(word: str) -> None:
    assert word in UNASKED_WORDS
    assert word not in query_terms(f"Where do they live {word}?")
    assert word not in lexical_terms("moved to Lucca", f"I live in Lucca {word}", None)


def test_a_verb_said_with_every_field_stays_a_keyword() -> None:
    # "take" is said with as many fields as "now", but links the question to its answer.
    assert query_terms("What does Peggy take for her chest now?") == ["peggy", "take", "chest"]
    assert fold_inflection("know") in query_terms("What tools does Ingrid know?")


def test_words_that_name_what_facts_hold_stay_keywords() -> None:
    assert query_terms("Which day is the delivery?") == ["day", fold_inflection("delivery")]
    assert "right" in query_terms("Is the right size in stock?")
    assert not UNASKED_WORDS & {"budget", "name", "move", "day", "right", "today"}


def test_the_packaged_file_is_the_pinned_one_and_a_changed_one_is_refused() -> None:
    data = json.dumps({"words": {"now": {}, "still": {}}}).encode()
    pin = hashlib.sha256(data).hexdigest()

    assert parse_unasked_words(data, pin) == {"now", "still"}
    assert unasked_words.packaged_unasked_words() == UNASKED_WORDS
    with pytest.raises(UnaskedWordsFileError, match="SHA-256"):
        parse_unasked_words(data.replace(b"still", b"budget"), pin)
    with pytest.raises(UnaskedWordsFileError, match="no words"):
        parse_unasked_words(b"[]", hashlib.sha256(b"[]").hexdigest())


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
