"""The multilingual encoder's closeness of a request to forget to each field (ADR 0200): a
request said in another language reads close to the field it names in its own words, which
the English heads' encoder does not read."""

from __future__ import annotations

import asyncio

import pytest

from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.multilingual_closeness import MultilingualCloseness
from factledger.application.review.forget_requests import MEANING_MIN

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
        "operating system": ["Windows 11 on all the office machines"],
        "issue": ["the export to PDF keeps failing"],
    }
    texts: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    for name, words in held.items():
        spans[name] = (len(texts), len(words))
        texts += [name, *words]
    heads = asyncio.run(LearnedJudge.packaged().similarities(PORTUGUESE, texts))
    second = asyncio.run(closeness.similarities(PORTUGUESE, texts))
    mean = [(a + b) / 2 for a, b in zip(heads, second, strict=True)]

    def closest(similarity: list[float]) -> tuple[str, float]:
        read = {
            name: similarity[at] + max(similarity[at + 1 : at + 1 + n], default=0.0)
            for name, (at, n) in spans.items()
        }
        best = max(read, key=read.__getitem__)
        return best, read[best]

    _, alone = closest(heads)
    both_field, both = closest(mean)
    assert alone < MEANING_MIN <= both
    assert both_field == "issue"


def test_nothing_to_compare_reads_nothing(closeness: MultilingualCloseness) -> None:
    assert asyncio.run(closeness.similarities(GERMAN, [])) == []
