"""Keyword inflections folded to a lemma two libraries agree on (simplemma proposes,
lemminflect's lexicon checks): plural, verb and irregular forms meet their lemma; short words
and numbers are left as they are; a name or a word the lexicon does not hold is never turned
into another word."""

from __future__ import annotations

import pytest

from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.scoring import STOPWORDS, keyword_tokens


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("invoices", "invoice"),
        ("batteries", "battery"),
        ("wolves", "wolf"),
        ("children", "child"),
        ("negotiating", "negotiate"),
        ("shipped", "ship"),
        ("bought", "buy"),
        ("taught", "teach"),
        ("renovated", "renovate"),
        ("Warehouses", "warehouse"),
    ],
)
def test_inflected_and_irregular_forms_meet_their_lemma(word: str, folded: str) -> None:
    assert fold_inflection(word.lower()) == folded


@pytest.mark.parametrize("word", ["bus", "was", "2023", "covid19", "b2b", "glass", "allergy"])
def test_short_words_numbers_and_base_forms_stay(word: str) -> None:
    assert fold_inflection(word) == word


def test_a_question_and_a_statement_meet_on_the_folded_form() -> None:
    asked, said = "who taught the children", "teaching a child"
    assert {fold_inflection(w) for w in keyword_tokens(asked)} == {
        fold_inflection(w) for w in keyword_tokens(said)
    }


def test_a_word_no_dictionary_holds_is_kept() -> None:
    assert fold_inflection("kestrelwraps") == "kestrelwraps"


@pytest.mark.parametrize("name", ["maria", "omar", "lucca", "priya", "birdwatching"])
def test_a_name_or_a_word_the_lexicon_does_not_hold_is_not_made_another_word(name: str) -> None:
    # simplemma alone reads "maria" as the Latin plural of "mare": a question naming a person
    # then met notes about horses.
    assert fold_inflection(name) == name


def test_a_word_the_lexicon_does_not_hold_loses_a_regular_plural_only() -> None:
    assert fold_inflection("labs") == "lab"
    assert fold_inflection("wordings") == "wording"


@pytest.mark.parametrize(
    ("word", "other_form", "folded"),
    [("playing", "plays", "play"), ("thinking", "thinks", "think"), ("fixing", "fixes", "fix")],
)
def test_a_misread_ending_is_corrected_by_the_lexicon(
    word: str, other_form: str, folded: str
) -> None:
    # simplemma proposes "playe", "thinke", "fixe": words no other form of the verb meets.
    assert fold_inflection(word) == fold_inflection(other_form) == folded


def test_stopwords_are_the_librarys_function_words_not_words_that_name_things() -> None:
    assert {"the", "of", "they", "which", "and"} <= STOPWORDS
    assert not {"home", "work", "research", "year", "name", "move"} & STOPWORDS
    assert keyword_tokens("The home of their research") == ["home", "research"]
