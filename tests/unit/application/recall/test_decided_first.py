"""Per-turn recall ranks what reviewers decided first (`recall.decided`)."""

from __future__ import annotations

from datetime import UTC, datetime

from factledger.application.memory.types import HitKind, SearchHit
from factledger.application.recall.decided import decided_first
from factledger.application.recall.sources import ProfileEntry

SUPPLIER = ProfileEntry(
    field="supplier",
    value="Vireo Wraps",
    condition=None,
    inferred=False,
    confirmed_at=datetime(2026, 3, 12, tzinfo=UTC),
    evidence_session="wa-2",
)
BUDGET = ProfileEntry("budget", "12000", None, False, datetime(2026, 3, 12, tzinfo=UTC), None)


def hit(memory_id: str, text: str, score: float) -> SearchHit:
    return SearchHit(memory_id, text, score, HitKind.MEMORY, True, False, None, None)


OLD = hit("m-old", "works with Supplier Tamarind", 0.9)
NEW = hit("m-new", "packaging sourced from vireo wraps these days", 0.6)
TEAM = hit("m-team", "team of 40 people", 0.5)


def test_a_memory_that_agrees_with_a_confirmed_field_comes_first() -> None:
    ranked = decided_first([SUPPLIER], "who packs their boxes", [OLD, TEAM, NEW])
    assert ranked.confirmed == ()
    assert [h.id for h in ranked.hits] == ["m-new", "m-old", "m-team"]


def test_a_confirmed_field_asked_about_and_stated_by_no_memory_comes_first() -> None:
    ranked = decided_first([SUPPLIER, BUDGET], "which supplier do they use", [OLD, TEAM])
    assert ranked.confirmed == (SUPPLIER,)
    assert [h.id for h in ranked.hits] == ["m-old", "m-team"]


def test_a_value_named_by_the_question_is_asked_about_in_any_number_format() -> None:
    ranked = decided_first([SUPPLIER, BUDGET], "is 12,000 enough", [TEAM])
    assert ranked.confirmed == (BUDGET,)


def test_nothing_confirmed_and_nothing_asked_leaves_the_search_order() -> None:
    assert decided_first([], "supplier", [OLD, NEW]).hits == (OLD, NEW)
    ranked = decided_first([BUDGET], "who packs their boxes", [OLD, NEW])
    assert (ranked.confirmed, ranked.hits) == ((), (OLD, NEW))
