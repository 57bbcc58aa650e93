"""When a namespace earns its mirror (ADR 0225): at its `earn_after`-th search when it is small,
at a search per `facts_per_search` facts when it is larger, never later than `earn_at_most`."""

from __future__ import annotations

import pytest

from factledger.adapters.pgvector.mirror.cache import MirrorSettings

DEFAULT = MirrorSettings()


@pytest.mark.parametrize(
    ("facts", "searches"),
    [(0, 2), (1, 2), (40, 2), (41, 3), (100, 5), (500, 25), (1_000, 50), (1_300, 64), (20_000, 64)],
)
def test_a_namespace_earns_its_mirror_at_a_search_per_twenty_facts_between_two_and_64(
    facts: int, searches: int
) -> None:
    assert DEFAULT.searches_to_earn(facts) == searches


@pytest.mark.parametrize(("searches", "facts"), [(1, 20), (2, 40), (10, 200), (63, 1_260)])
def test_searches_pay_for_a_mirror_of_twenty_facts_each(searches: int, facts: int) -> None:
    assert DEFAULT.facts_paid_for(searches) == facts
    assert DEFAULT.searches_to_earn(facts) <= max(searches, DEFAULT.earn_after)
    assert DEFAULT.searches_to_earn(facts + 1) > searches


def test_from_earn_at_most_searches_a_namespace_of_any_size_has_paid() -> None:
    assert DEFAULT.facts_paid_for(DEFAULT.earn_at_most) is None
    assert DEFAULT.facts_paid_for(DEFAULT.earn_at_most + 5) is None


def test_without_facts_per_search_the_size_does_not_count() -> None:
    by_count = MirrorSettings(earn_after=3, facts_per_search=None)

    assert by_count.searches_to_earn(100_000) == 3
    assert by_count.facts_paid_for(1) is None


def test_earn_after_above_earn_at_most_is_the_search_that_earns_any_size() -> None:
    late = MirrorSettings(earn_after=100, earn_at_most=64)

    assert late.searches_to_earn(10) == late.searches_to_earn(1_000_000) == 100
    assert late.facts_paid_for(100) is None


def test_no_fact_earns_a_mirror_by_itself() -> None:
    with pytest.raises(ValueError, match="facts_per_search"):
        MirrorSettings(facts_per_search=0)
