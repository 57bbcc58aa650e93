"""Per-question retrieval scores and percentiles, as the dataset READMEs define them."""

from __future__ import annotations

import math

import pytest

from factledger.bench.metrics import ScoreTable, percentile, score_ranking


def test_recall_counts_every_gold_id_an_item_covers() -> None:
    ranked = [{"D1:1"}, {"D2:2", "D3:3"}, set(), {"D9:9"}]
    scores = score_ranking(ranked, frozenset({"D2:2", "D3:3", "D4:4"}))
    assert scores.recall[1] == 0.0
    assert scores.recall[3] == pytest.approx(2 / 3)
    assert scores.hit[1] == 0.0
    assert scores.hit[3] == 1.0
    assert scores.all[10] == 0.0
    assert scores.reciprocal_rank == 0.5


def test_k_counts_items_not_ids() -> None:
    # One fact covering three turns fills one of the k slots, not three.
    scores = score_ranking([{"D1:1", "D1:2", "D1:3"}, {"D5:5"}], frozenset({"D5:5"}))
    assert scores.hit[1] == 0.0
    assert scores.hit[3] == 1.0
    assert scores.all[3] == 1.0


def test_an_empty_ranking_scores_zero() -> None:
    scores = score_ranking([], frozenset({"D1:1"}))
    assert scores.recall == {1: 0.0, 3: 0.0, 5: 0.0, 10: 0.0}
    assert scores.reciprocal_rank == 0.0


def test_the_table_averages_per_group_and_overall() -> None:
    table = ScoreTable()
    table.add("c1", score_ranking([{"a"}], frozenset({"a"})))
    table.add("c1", score_ranking([{"b"}], frozenset({"a"})))
    table.add("c2", score_ranking([{"a"}], frozenset({"a"})))
    summary = table.as_dict()
    assert summary["c1"]["recall@1"] == 0.5
    assert summary["c2"]["recall@1"] == 1.0
    assert summary["overall"]["recall@1"] == pytest.approx(0.6667, abs=1e-4)
    assert summary["overall"]["n"] == 3


def test_percentiles_interpolate_between_samples() -> None:
    samples = [float(n) for n in range(1, 101)]
    assert percentile(samples, 50) == pytest.approx(50.5)
    assert percentile(samples, 99) == pytest.approx(99.01)
    assert percentile(samples, 100) == 100.0
    assert math.isnan(percentile([], 50))
