"""When a reason restates the words it forgets (`domain.restated`): numbers in any of the
spellings the product reads as one, two words in a row, a whole short value; never the field's
name or a reason in other words."""

from __future__ import annotations

import pytest

from factledger.domain.errors import ReasonRestatesError
from factledger.domain.restated import check_not_restated, restates, words_of

LINE = "Our budget is about 40,000 euros, from Lantern Quarry."


@pytest.mark.parametrize(
    "reason",
    [
        "forget that my budget is 40k",
        "Forget: 40000!",
        "they no longer buy from LANTERN-QUARRY",
        "the 40,000.00 figure",
    ],
)
def test_a_reason_holding_the_words_restates_them(reason: str) -> None:
    assert restates(reason, [LINE])
    with pytest.raises(ReasonRestatesError) as raised:
        check_not_restated(reason, [LINE])
    assert raised.value.field == "reason"
    assert "40" not in str(raised.value)


@pytest.mark.parametrize(
    "reason",
    ["the subject asked", "forget my budget", "GDPR request of 2026-11-30", "lantern festival"],
)
def test_a_reason_in_other_words_restates_nothing(reason: str) -> None:
    assert not restates(reason, [LINE])


def test_a_one_word_value_is_restated_whole() -> None:
    assert restates("forget acme please", ["Acme"])
    assert not restates("forget the supplier", ["Acme"])


def test_numbers_are_read_as_one_whatever_their_spelling() -> None:
    assert words_of("40k") == words_of("40,000") == words_of("40000") == ["40000"]
    assert words_of("1.5m") == ["1500000"]
