"""The multilingual encoder's closeness of a request to forget to each field (ADR 0200): a
request said in another language reads close to the field it names in its own words, which
the English heads' encoder does not read."""

from __future__ import annotations

import asyncio

import pytest

from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.multilingual_closeness import MultilingualCloseness
from factledger.application.review.forget_requests import (
    MEANING_MIN,
    closeness_by_field,
    field_texts,
    read_closeness,
)

GERMAN = "Bitte streichen Sie meinen alten Arbeitgeber aus Ihren Unterlagen."
PORTUGUESE = "por favor apaguem o histórico do meu problema, não quero isso guardado"
FIELDS = ["employer", "product version", "operating system", "issue"]


@pytest.fixture(scope="module")
def closeness() -> MultilingualCloseness:
    return MultilingualCloseness.packaged()


def test_a_request_in_another_language_is_closest_to_the_field_it_names(
    closeness: MultilingualCloseness,
) -> None:
    german = asyncio.run(closeness.similarities(GERMAN, FIELDS))
    portuguese = asyncio.run(closeness.similarities(PORTUGUESE, FIELDS))
    assert max(FIELDS, key=dict(zip(FIELDS, german, strict=True)).__getitem__) == "employer"
    assert max(FIELDS, key=dict(zip(FIELDS, portuguese, strict=True)).__getitem__) == "issue"
    assert all(-1.0 <= s <= 1.0 for s in [*german, *portuguese])


def test_a_request_the_heads_encoder_alone_leaves_under_the_bar_is_placed_by_both(
    closeness: MultilingualCloseness,
) -> None:
    # A field's closeness as `fields_concerned` reads it: its name's similarity plus its best
    # held words'. Read by the English heads' encoder alone the Portuguese request is under
    # the meaning bar (so it was never placed on the issue); the mean of both clears it.
    held = {
        "employer": ["I'm in accounts at Ostwind Logistik"],
        "operating_system": ["Windows 11 on all the office machines"],
        "issue": ["the export to PDF keeps failing"],
    }
    texts, spans = field_texts(held)
    judge = LearnedJudge.packaged()
    heads = asyncio.run(read_closeness(PORTUGUESE, texts, judge))
    mean = asyncio.run(read_closeness(PORTUGUESE, texts, judge, closeness))

    alone = max(closeness_by_field(heads, spans).values())
    both = closeness_by_field(mean, spans)
    assert alone < MEANING_MIN <= max(both.values())
    assert max(both, key=both.__getitem__) == "issue"


def test_nothing_to_compare_reads_nothing(closeness: MultilingualCloseness) -> None:
    assert asyncio.run(closeness.similarities(GERMAN, [])) == []
