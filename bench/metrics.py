"""Retrieval and latency scores, as the dataset READMEs define them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

KS = (1, 3, 5, 10)


@dataclass(frozen=True, slots=True)
class RankedScores:
    """One question's scores: recall@k, hit@k, all@k for each k, and the reciprocal rank."""

    recall: dict[int, float]
    hit: dict[int, float]
    all: dict[int, float]
    reciprocal_rank: float


def score_ranking(
    ranked: Sequence[Iterable[str]], gold: frozenset[str], ks: Sequence[int] = KS
) -> RankedScores:
    """Scores a ranking whose items each cover a set of gold-id space ids.

    An item counts for every id it covers (an extracted fact covers all of its source turns),
    and k counts returned items, not ids.
    """
    covered_by_rank: list[frozenset[str]] = [frozenset(item) for item in ranked]
    recall, hit, every = {}, {}, {}
    for k in ks:
        covered = frozenset().union(*covered_by_rank[:k]) if covered_by_rank else frozenset()
        found = len(gold & covered)
        recall[k] = found / len(gold)
        hit[k] = 1.0 if found else 0.0
        every[k] = 1.0 if found == len(gold) else 0.0
    first = next((i for i, item in enumerate(covered_by_rank) if gold & item), None)
    return RankedScores(recall, hit, every, 0.0 if first is None else 1.0 / (first + 1))


@dataclass(slots=True)
class ScoreTable:
    """Means of per-question scores, overall and per group (a category, a topic)."""

    ks: tuple[int, ...] = KS
    _rows: dict[str, list[RankedScores]] = field(default_factory=dict)

    def add(self, group: str, scores: RankedScores) -> None:
        self._rows.setdefault(group, []).append(scores)

    def merge(self, other: ScoreTable) -> None:
        """Adds every row of `other`, in its groups."""
        for group, rows in other._rows.items():
            self._rows.setdefault(group, []).extend(rows)

    def groups(self) -> list[str]:
        return sorted(self._rows)

    def count(self, group: str | None = None) -> int:
        return len(self._select(group))

    def mean(self, metric: str, k: int | None = None, group: str | None = None) -> float:
        rows = self._select(group)
        if not rows:
            return math.nan
        if metric == "mrr":
            return sum(row.reciprocal_rank for row in rows) / len(rows)
        if k is None:
            raise ValueError(metric)
        values: list[float] = [getattr(row, metric)[k] for row in rows]
        return sum(values) / len(values)

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        """`{"overall": {...}, "<group>": {...}}` with `recall@k`, `hit@k`, `all@k`, `mrr`, `n`."""
        out: dict[str, dict[str, float | int]] = {}
        for group in [None, *self.groups()]:
            row: dict[str, float | int] = {"n": self.count(group)}
            for metric in ("recall", "hit", "all"):
                for k in self.ks:
                    row[f"{metric}@{k}"] = round(self.mean(metric, k, group), 4)
            row["mrr"] = round(self.mean("mrr", None, group), 4)
            out["overall" if group is None else group] = row
        return out

    def _select(self, group: str | None) -> list[RankedScores]:
        if group is not None:
            return self._rows.get(group, [])
        return [row for rows in self._rows.values() for row in rows]


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation; NaN for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
