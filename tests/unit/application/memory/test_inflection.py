"""Keyword inflections folded by the lemmatiser library (simplemma): plural, verb and
irregular forms meet their lemma; short words and numbers are left as they are."""

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


def test_stopwords_are_the_librarys_function_words_not_words_that_name_things() -> None:
    assert {"the", "of", "they", "which", "and"} <= STOPWORDS
    assert not {"home", "work", "research", "year", "name", "move"} & STOPWORDS
    assert keyword_tokens("The home of their research") == ["home", "research"]
