"""When a reason restates the words it forgets (`domain.restated`): numbers in any of the
spellings the product reads as one, two words in a row, a whole short value; never the field's
name or a reason in other words. The words too common to count are the caller's (the ledger
passes its stopword library's function words, ADR 0108); without them every word counts."""

from __future__ import annotations

import pytest

from factledger.application.memory.scoring import STOPWORDS
from factledger.domain.errors import ReasonRestatesError
from factledger.domain.restated import check_not_restated, restates, words_of

LINE = "Our budget is about 40,000 euros, from Lantern Quarry."
COMMON = [pytest.param(frozenset(), id="every-word"), pytest.param(STOPWORDS, id="library")]


@pytest.mark.parametrize(
    "reason",
    [
        "forget that my budget is 40k",
        "Forget: 40000!",
        "they no longer buy from LANTERN-QUARRY",
        "the 40,000.00 figure",
    ],
)
@pytest.mark.parametrize("common", COMMON)
def test_a_reason_holding_the_words_restates_them(reason: str, common: frozenset[str]) -> None:
    assert restates(reason, [LINE], common)
    with pytest.raises(ReasonRestatesError) as raised:
        check_not_restated(reason, [LINE], common)
    assert raised.value.field == "reason"
    assert "40" not in str(raised.value)


@pytest.mark.parametrize(
    "reason",
    ["the subject asked", "forget my budget", "GDPR request of 2026-11-30", "lantern festival"],
)
@pytest.mark.parametrize("common", COMMON)
def test_a_reason_in_other_words_restates_nothing(reason: str, common: frozenset[str]) -> None:
    assert not restates(reason, [LINE], common)


@pytest.mark.parametrize("common", COMMON)
def test_a_one_word_value_is_restated_whole(common: frozenset[str]) -> None:
    assert restates("forget acme please", ["Acme"], common)
    assert not restates("forget the supplier", ["Acme"], common)


def test_function_words_in_a_row_restate_nothing_once_the_caller_names_them() -> None:
    # "is about" and "from the" are in the line and the reason alike; no word of the
    # subject's is, so with the library's function words left out nothing is restated.
    reason = "the subject is about to leave: we heard from the account team"
    assert restates(reason, [LINE])
    assert not restates(reason, [LINE], STOPWORDS)
    assert words_of(LINE, STOPWORDS)[:2] == ["budget", "40000"]


def test_numbers_are_read_as_one_whatever_their_spelling() -> None:
    assert words_of("40k") == words_of("40,000") == words_of("40000") == ["40000"]
    assert words_of("1.5m") == ["1500000"]


def test_the_words_of_a_request_count_like_any_other() -> None:
    # ADR 0108: the library's function words hold no word of a forget request, so a reason
    # quoting the subject's request is refused; saying why in other words goes through.
    request = "Please forget the budget thing we discussed last week."
    assert restates("the subject said please forget", [request], STOPWORDS)
    assert not restates("the subject asked for erasure", [request], STOPWORDS)
