"""Values compared by what they say: case, accents, punctuation and number formats aside."""

from __future__ import annotations

import pytest

from factledger.application.memory.sameness import (
    same_value,
    shortens,
    states,
    tokens,
    value_phrases,
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Supplier B", "supplier b"),
        ("Supplier-B", "Supplier B."),
        ("Café Noir", "cafe noir"),
        ("12,000", "12000"),
        ("12k", "12000"),
        ("1.5m", "1,500,000"),
        ("12 000", "12000"),
        ("USD 12,000", "12000"),
        ("$12,000", "12000"),
        ("40.0", "40"),
    ],
)
def test_the_same_value_in_other_wordings(a: str, b: str) -> None:
    assert same_value(a, b)
    assert same_value(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Supplier B", "Supplier A"),
        ("12,000", "13,000"),
        ("12k", "12"),
        ("Pro plan", "Pro"),
        ("USD 12,000", "EUR 13,000"),
    ],
)
def test_different_values_stay_different(a: str, b: str) -> None:
    assert not same_value(a, b)


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("Obinna", "Obinna Eze"),
        ("Eze", "Obinna Eze"),
        ("Hyun-woo", "Hyun-woo Park"),
        ("Fernhill Dental", "Fernhill Dental Group"),
        ("Pérez", "Yolanda Pérez-Okoro"),
        ("Мария", "Мария Иванова"),
    ],
)
def test_a_value_with_capitalised_words_left_out_shortens_it(short: str, long: str) -> None:
    assert shortens(short, long)
    assert not shortens(long, short)


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("smoker", "non-smoker"),
        ("Pro", "Pro plan"),
        ("Maple Heights", "Maple Heights mainly"),
        ("12", "12 Oak Street"),
        ("Oak", "12 Oak Street"),
        ("Obinna", "Obinna"),
        ("Obinna", "Chidi Eze"),
        ("김민수", "김민수 박"),
        ("", "Obinna Eze"),
    ],
)
def test_lowercase_words_numbers_and_uncased_scripts_never_shorten(short: str, long: str) -> None:
    assert not shortens(short, long)


def test_a_note_states_a_value_only_as_whole_words_in_order() -> None:
    assert states("works with Supplier Tamarind since May", "supplier tamarind")
    assert states("budget is around $12,000 a year", "12000")
    assert not states("works with Supplier Tamarindo", "Supplier Tamarind")
    assert not states("Tamarind works as a supplier", "Supplier Tamarind")
    assert not states("anything", "")


def test_numbers_become_one_token_each() -> None:
    assert tokens("a team of 1,200 people") == tokens("A team of 1200 people!")
    assert tokens("2.5k") == tokens("2500")


def test_value_phrases_read_every_stored_value_type() -> None:
    assert value_phrases({"type": "text", "value": "Supplier B"}) == ["Supplier B"]
    assert value_phrases({"type": "money", "amount": "12000", "currency": "USD"}) == ["12000"]
    assert value_phrases({"type": "list", "items": ["late deliveries", "price"]}) == [
        "late deliveries",
        "price",
    ]
    assert value_phrases({"type": "date", "value": "2026-05-01"}) == ["2026-05-01"]
    assert value_phrases({"type": "boolean", "value": True}) == []
    assert value_phrases({"type": "text", "value": None}) == []  # an erased value
    assert value_phrases(None) == []
