"""Plural and -ing/-ed endings folded, derivations and short words left alone (ADR 0039)."""

from __future__ import annotations

import pytest

from factledger.application.memory.inflection import fold_inflection


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("kids", "kid"),
        ("stories", "story"),
        ("classes", "class"),
        ("boxes", "box"),
        ("lunches", "lunch"),
        ("dishes", "dish"),
        ("buzzes", "buzz"),
        ("researching", "research"),
        ("camped", "camp"),
        ("painted", "paint"),
        ("swimming", "swim"),
        ("planned", "plan"),
        ("studied", "study"),
        ("called", "call"),
        ("passed", "pass"),
        ("moved", "mov"),
        ("moving", "mov"),
    ],
)
def test_inflected_forms_lose_their_ending(word: str, folded: str) -> None:
    assert fold_inflection(word) == folded


@pytest.mark.parametrize(
    "word",
    [
        "research",
        "camp",
        "move",
        "glass",
        "bonus",
        "this",
        "need",
        "agreed",
        "thing",
        "sing",
        "bus",
        "was",
        "allergic",
        "allergy",
        "supplier",
        "2023",
        "covid19",
    ],
)
def test_base_forms_derivations_short_words_and_numbers_stay(word: str) -> None:
    assert fold_inflection(word) == word


def test_a_question_and_a_statement_meet_on_the_folded_form() -> None:
    asked, said = "research camped kids", "researching camp kid"

    assert [fold_inflection(w) for w in asked.split()] != asked.split()
    assert {fold_inflection(w) for w in asked.split()} == {fold_inflection(w) for w in said.split()}


def test_an_e_final_verbs_base_form_stays_apart_from_its_inflections() -> None:
    # Putting the "e" back would join "moves" (a courier's parcels) with "moved to Lucca".
    assert fold_inflection("moves") == "move" != fold_inflection("moved")


def test_a_plural_after_a_hissing_sound_meets_its_singular_and_other_es_words_keep_the_e() -> None:
    assert fold_inflection("boxes") == "box" == fold_inflection("box")
    assert fold_inflection("matches") == fold_inflection("match")
    assert fold_inflection("cases") == "case"
    assert fold_inflection("packages") == "package"
