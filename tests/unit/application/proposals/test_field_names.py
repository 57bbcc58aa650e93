"""A value that only names its field (ADR 0234): every word beside the function words is a
word of the field's name, lemmas folded."""

from __future__ import annotations

import pytest

from factledger.application.proposals.field_names import restates_field


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("Same address", "home_address"),
        ("Budget as before.", "budget"),
        ("Emergency contact", "emergency_contact"),
        ("my policy", "policy_type"),
        ("Policies", "policy_type"),
        ("payment.", "payment_method"),
        ("Notice is the same", "notice_period"),
        # The cost the ADR names: a field named by a predicate, answered by it.
        ("not willing to relocate", "willing_to_relocate"),
    ],
)
def test_a_value_of_the_fields_own_words_names_only_the_field(value: str, field: str) -> None:
    assert restates_field(value, field)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("12 Oak Street", "home_address"),
        ("Budget is 40k", "budget"),
        ("my brother, Tunde Bakare", "emergency_contact"),
        ("direct debit", "payment_method"),
        ("Still smoking", "smoking_status"),
        ("Supplier A", "supplier"),  # a capitalised word after the first is a name's
        ("the same", "budget"),  # function words only: nothing of its own to judge
        ("", "budget"),
    ],
)
def test_a_value_with_a_word_of_its_own_is_a_value(value: str, field: str) -> None:
    assert not restates_field(value, field)
