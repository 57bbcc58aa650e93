"""The shared scoring helpers and the Python filter evaluator."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from factledger.adapters.in_memory.store import VectorTable
from factledger.application.memory.chunking import split_chunks
from factledger.application.memory.filters import matches
from factledger.application.memory.scoring import (
    bm25_scores,
    keyword_tokens,
    rank_desc,
    reciprocal_rank_fusion,
)
from factledger.application.memory.types import AllOf, AnyOf, Condition, FilterOp


def test_keyword_tokens_drop_stopwords_and_case() -> None:
    assert keyword_tokens("The Supplier of THE flour, ZX-4471") == [
        "supplier",
        "flour",
        "zx",
        "4471",
    ]


def test_bm25_prefers_the_rarer_term_and_scores_no_match_zero() -> None:
    docs = [Counter(keyword_tokens(t)) for t in ["flour flour order", "order shipped", "tea"]]

    scores = bm25_scores(["flour", "order"], docs)

    assert scores[0] > scores[1] > 0.0
    assert scores[2] == 0.0
    assert bm25_scores([], docs) == [0.0, 0.0, 0.0]
    assert bm25_scores(["x"], []) == []


def test_rrf_gives_one_to_an_item_first_everywhere_and_keeps_order() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["a", "c"]])

    assert fused["a"] == pytest.approx(1.0)
    assert rank_desc(fused) == ["a", "c", "b"]
    assert all(0.0 < s <= 1.0 for s in fused.values())


def test_rank_desc_breaks_ties_by_id() -> None:
    assert rank_desc({"b": 0.5, "a": 0.5, "c": 0.9}) == ["c", "a", "b"]


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (Condition("n", FilterOp.EQ, 1), False),  # a bool never equals a number
        (Condition("flag", FilterOp.EQ, True), True),
        (Condition("n", FilterOp.GT, "a"), False),  # no cross-type comparison
        (Condition("tags", FilterOp.IN, ("x",)), False),  # 'in' is for scalar values
        (Condition("tags", FilterOp.ARRAY_CONTAINS, "vip"), True),
        (Condition("flag", FilterOp.NEQ, False), True),
        (Condition("absent", FilterOp.NEQ, "x"), False),
        (AllOf((Condition("n", FilterOp.GTE, 2.5), Condition("n", FilterOp.LTE, 3))), True),
        (AnyOf((Condition("n", FilterOp.LT, 0), Condition("day", FilterOp.LT, "2025-02"))), True),
    ],
)
def test_filters_compare_only_like_with_like(node: object, expected: bool) -> None:
    metadata = {"n": 3, "flag": True, "tags": ("vip", "x"), "day": "2025-01-15"}

    assert matches(node, metadata) is expected  # type: ignore[arg-type]


def test_split_chunks_keeps_every_character() -> None:
    text = " ".join(f"w{n}" for n in range(1_000))

    pieces = split_chunks(text, max_chars=100)

    assert "".join(pieces) == text
    assert all(len(p) <= 100 for p in pieces)
    assert split_chunks("{}") == ["{}"]


def test_vector_table_stacks_appended_rows() -> None:
    table = VectorTable(3)
    table.append(np.eye(3, dtype=np.float32)[:2])
    first = table.matrix()
    table.append(np.eye(3, dtype=np.float32)[2:])

    assert first.shape == (2, 3)
    assert np.array_equal(table.matrix(), np.eye(3, dtype=np.float32))
