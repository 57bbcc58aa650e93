"""The pgvector bounded search restates two scoring formulas in SQL (`keyword_bound._BOUNDED`,
ADR 0041): the fused score's closed form and the IDF weights. These tests pin the Python
functions to those forms, so a change of either fails here and points at the SQL."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from factledger.application.memory.lexical import (
    LEXICAL_WEIGHT,
    fused_score,
    idf_weights,
)

cosines = st.floats(min_value=-1.0, max_value=1.0)
coverages = st.floats(min_value=0.0, max_value=1.0)


@given(cosines, coverages)
def test_the_fused_score_is_the_cosine_plus_a_weighted_coverage_capped_at_one(
    cosine: float, coverage: float
) -> None:
    assert fused_score(cosine, coverage) == min(1.0, cosine + LEXICAL_WEIGHT * coverage)


@given(cosines, st.floats(min_value=-1.0, max_value=1.0))
def test_the_least_coverage_reaching_a_bar_is_linear_below_the_cap(
    cosine: float, bar: float
) -> None:
    needed = (bar - cosine) / LEXICAL_WEIGHT
    if 0.0 <= needed <= 1.0:
        assert fused_score(cosine, needed + 1e-9) >= bar - 1e-12
        assert fused_score(cosine, max(0.0, needed - 1e-6)) < bar or needed < 1e-6


@given(st.integers(min_value=1, max_value=10_000), st.data())
def test_idf_weights_are_bm25s(searched: int, data: st.DataObject) -> None:
    frequency = data.draw(st.integers(min_value=0, max_value=searched))
    [weight] = idf_weights(["t"], {"t": frequency}, searched)
    assert weight == math.log(1.0 + (searched - frequency + 0.5) / (frequency + 0.5))
