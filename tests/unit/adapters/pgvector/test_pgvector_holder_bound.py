"""Step two of a bounded search (`keyword_bound.holder_bound`, ADR 0030, 0041, 0045): which
holders the second statement looks up, and the bar it filters their fused scores by."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.adapters.pgvector.keyword_bound import holder_bound
from factledger.application.memory.lexical import LEXICAL_WEIGHT
from factledger.application.memory.types import SearchQuery


def vector_rows(cosines: list[float]) -> list[dict[str, Any]]:
    return [{"id": f"v{i}", "score": c, "lexical_terms": []} for i, c in enumerate(cosines)]


def frequencies(searched: int, **held: int) -> list[dict[str, Any]]:
    return [{"id": "", "score": searched}] + [{"id": t, "score": n} for t, n in held.items()]


def test_the_holders_of_every_required_keyword_are_looked_up_rarest_first() -> None:
    # The bar (0.76) is 0.74 x the lexical weight above the bounding cosine: a fact outside
    # the vector list needs 0.74 of the keyword weight, so each of two equally weighted
    # keywords is required.
    bounding = 0.76 - 0.74 * LEXICAL_WEIGHT
    rows = vector_rows([0.80, 0.78, 0.76] + [0.75 - (0.75 - bounding) * i / 16 for i in range(17)])

    bound = holder_bound(
        SearchQuery("lantern harbour", threshold=0.0),
        ["lantern", "harbour"],
        rows,
        frequencies(1000, lantern=40, harbour=30),
    )

    assert bound is not None
    assert bound.every
    assert bound.lookup == ("harbour", "lantern")
    assert bound.bar == pytest.approx(0.76)
    assert bound.total == pytest.approx(sum(bound.weights))


def test_without_a_required_keyword_the_holders_of_any_keyword_left_are_looked_up() -> None:
    # The bar is 0.02 above the bounding cosine: any one keyword lifts a fact past it.
    rows = vector_rows([0.62 - i * 0.001 for i in range(20)])

    bound = holder_bound(
        SearchQuery("lantern harbour", threshold=0.0),
        ["lantern", "harbour"],
        rows,
        frequencies(1000, lantern=40, harbour=30),
    )

    assert bound is not None
    assert not bound.every
    assert set(bound.lookup) == {"lantern", "harbour"}
