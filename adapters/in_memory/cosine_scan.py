"""Cosine search as one matrix scan: every row of a namespace's vector table is scored in a
single product, and only the best-scoring items are looked at in Python, in score order,
until `limit` of them pass the query's filters.

The answer is the one a filter-everything-first search gives (the hits above the threshold,
best first, ties by id): filtering is only moved after scoring. Many hidden or filtered
items near the top make the walk longer, never wrong.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

import numpy as np

from factledger.application.memory.ports import Vectors
from factledger.application.memory.scoring import cosine_scores


class Row(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def row(self) -> int: ...


T = TypeVar("T", bound=Row)
FIRST_WINDOW_PER_HIT = 4  # candidates looked at per wanted hit before sorting the rest


class RowIndex:
    """The matrix row of each item of an append-only list, as an array (extended, not
    rebuilt, as the list grows; rebuilt when the list is replaced)."""

    def __init__(self) -> None:
        self._items: Sequence[Row] | None = None
        self._rows = np.zeros(0, dtype=np.int64)

    def rows(self, items: Sequence[Row]) -> np.ndarray:
        if items is not self._items or len(items) < len(self._rows):
            self._items, self._rows = items, np.zeros(0, dtype=np.int64)
        if len(items) > len(self._rows):
            new = items[len(self._rows) :]
            added = np.fromiter((item.row for item in new), dtype=np.int64, count=len(new))
            self._rows = np.concatenate([self._rows, added])
        return self._rows


_indexes: weakref.WeakKeyDictionary[object, dict[str, RowIndex]] = weakref.WeakKeyDictionary()


def row_index(owner: object, name: str) -> RowIndex:
    """The `RowIndex` of one list of `owner` (kept as long as the owner lives)."""
    return _indexes.setdefault(owner, {}).setdefault(name, RowIndex())


def top_by_cosine(
    matrix: Vectors,
    items: Sequence[T],
    rows: np.ndarray,
    vector: Vectors,
    *,
    threshold: float,
    limit: int,
    admit: Callable[[T], bool],
) -> list[tuple[T, float]]:
    """The `limit` best admitted items scoring at least `threshold`, best first, ties by id."""
    if not items or limit <= 0:
        return []
    # float32 rounding can push an exact match a hair above 1.
    scores = np.minimum(cosine_scores(matrix, vector), np.float32(1.0))[rows]
    candidates = np.flatnonzero(scores >= threshold)
    admitted: list[tuple[T, float]] = []
    seen: set[int] = set()
    for position in _best_first(scores, candidates, limit):
        seen.add(position)
        item = items[position]
        if admit(item):
            admitted.append((item, float(scores[position])))
            if len(admitted) == limit:
                break
    if len(admitted) == limit:
        # Items tied with the last hit compete on id, wherever the scan left them.
        last = np.float32(admitted[-1][1])
        tied = (items[int(p)] for p in np.flatnonzero(scores == last) if int(p) not in seen)
        admitted.extend((item, float(last)) for item in tied if admit(item))
    admitted.sort(key=lambda hit: (-hit[1], hit[0].id))
    return admitted[:limit]


def _best_first(scores: np.ndarray, candidates: np.ndarray, limit: int) -> Iterator[int]:
    """Candidate positions by descending score: a small window first (most searches need
    no more), then the rest sorted."""
    window = FIRST_WINDOW_PER_HIT * limit + 16
    if len(candidates) > window:
        split = np.argpartition(-scores[candidates], window - 1)
        first, rest = candidates[split[:window]], candidates[split[window:]]
    else:
        first, rest = candidates, candidates[:0]
    for part in (first, rest):
        yield from (int(p) for p in part[np.argsort(-scores[part], kind="stable")])
