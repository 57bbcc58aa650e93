"""Verb agreement of the confirmation question comes from the inflection library: verbs no
list here names are turned, and words that are no verb are left alone."""

from __future__ import annotations

import pytest

from factledger.application.recall.questions import field_label, second_person_note
from factledger.application.recall.verbs import is_adverb, said_of_you, second_person


@pytest.mark.parametrize(
    ("third", "second"),
    [
        ("negotiates", "negotiate"),
        ("carries", "carry"),
        ("pushes", "push"),
        ("has", "have"),
        ("is", "are"),
        ("was", "were"),
        ("hasn't", "haven't"),
        ("wasn't", "weren't"),
        ("would", "would"),
        ("should", "should"),
    ],
)
def test_a_third_person_verb_takes_the_second_person(third: str, second: str) -> None:
    assert second_person(third) == second


@pytest.mark.parametrize("word", ["Lisbon", "quarterly", "negotiated", "you", "twelve"])
def test_a_word_that_is_no_third_person_verb_is_not_turned(word: str) -> None:
    assert second_person(word) is None


def test_adverbs_before_the_verb_are_kept_in_place() -> None:
    assert is_adverb("rarely")
    assert is_adverb("usually")
    assert not is_adverb("negotiates")
    assert second_person_note("rarely travels abroad for work") == (
        "you rarely travel abroad for work"
    )
    assert second_person_note("Lisbon office") is None


@pytest.mark.parametrize(
    ("verb", "true", "false"),
    [
        ("owns", "own", "do not own"),
        ("is", "are", "are not"),
        ("can", "can", "cannot"),
        ("will", "will", "will not"),
        ("approved", None, None),
    ],
)
def test_a_boolean_fields_verb_is_said_of_you(
    verb: str, true: str | None, false: str | None
) -> None:
    assert said_of_you(verb, true=True) == true
    assert said_of_you(verb, true=False) == false


def test_acronyms_are_read_by_the_dictionary_not_a_list() -> None:
    assert field_label("gdpr_contact") == "GDPR contact"
    assert field_label("b2b_hr_owner") == "b2b HR owner"
    assert field_label("home_address") == "home address"
