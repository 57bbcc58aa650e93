"""One namespace's facts held in the process, and a memories-mode search over them (ADR 0056).

The rows are those a pgvector search reads (`feed.MIRROR_COLUMNS`), kept as arrays where a
search needs them whole: the vectors and their norms, the visibility flags, the expiries, and
each keyword's holders. A search scores every fact (one matrix product), so it is exact where
the database's HNSW list is approximate; the ranking is the pgvector search's (`lexical`'s
IDF over the visible facts, `fused_score`, ties by id), and the hits are built by the same
`to_hit` from the same columns.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from factledger.adapters.pgvector.search import to_hit
from factledger.application.memory.lexical import fused_scores, idf_weights, query_terms
from factledger.application.memory.types import HitKind, SearchHit, SearchQuery

_NO_HOLDERS: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
# Expiries as integer microseconds since the epoch: exact, so an expiry equal to the moment
# searched hides the fact, as the database's `expires_at > now` does.
_NEVER = np.iinfo(np.int64).max
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# Python objects per fact besides its arrays (the row's dict and its values): what a mirror's
# size in bytes adds per fact on top of its text and JSON (an estimate, for the budget; traced
# at ~1.5 KB with the bench's facts, whose texts are ~60 characters).
_ROW_OVERHEAD = 1500


class MirroredNamespace:
    """The facts of one namespace as of `version` in `epoch` (`memory_versions`)."""

    def __init__(self, epoch: int | None, version: int, dimension: int, capacity: int) -> None:
        self.epoch = epoch
        self.version = version
        self._rows: list[dict[str, Any]] = []
        self._position: dict[str, int] = {}
        capacity = max(capacity, 16)
        self._vectors = np.zeros((capacity, dimension), dtype=np.float32)
        self._norms = np.zeros(capacity, dtype=np.float32)
        self._latest = np.zeros(capacity, dtype=np.bool_)
        self._inference = np.zeros(capacity, dtype=np.bool_)
        self._forgotten = np.zeros(capacity, dtype=np.bool_)
        self._expires = np.full(capacity, _NEVER, dtype=np.int64)
        self._changed = np.zeros(capacity, dtype=np.int64)
        self._holders: dict[str, set[int]] = {}
        self._holder_arrays: dict[str, npt.NDArray[np.int64]] = {}
        self._row_bytes = 0

    @property
    def nbytes(self) -> int:
        """The mirror's size as the budget counts it: its arrays, and an estimate of its rows."""
        arrays = (self._vectors, self._norms, self._latest, self._inference, self._forgotten)
        return sum(a.nbytes for a in (*arrays, self._expires, self._changed)) + self._row_bytes

    def __len__(self) -> int:
        return len(self._rows)

    def apply(self, rows: Iterable[dict[str, Any]]) -> None:
        """Writes each row as the database has it now; a row older than the one held (a
        search's changes that arrived after a later search's) is skipped."""
        for row in rows:
            position = self._position.get(row["id"])
            if position is None:
                position = self._append(row)
            elif row["changed_in"] < self._changed[position]:
                continue
            else:
                self._unhold(position)
                self._row_bytes -= _row_bytes(self._rows[position])
            self._write(position, row)

    def _append(self, row: dict[str, Any]) -> int:
        position = len(self._rows)
        if position == len(self._norms):
            self._grow()
        self._rows.append(row)
        self._position[row["id"]] = position
        return position

    def _grow(self) -> None:
        size = 2 * len(self._norms)

        def grown(array: npt.NDArray[Any], fill: Any) -> npt.NDArray[Any]:
            bigger = np.full((size, *array.shape[1:]), fill, dtype=array.dtype)
            bigger[: len(array)] = array
            return bigger

        self._vectors = grown(self._vectors, 0.0)
        self._norms = grown(self._norms, 0.0)
        self._latest = grown(self._latest, False)
        self._inference = grown(self._inference, False)
        self._forgotten = grown(self._forgotten, False)
        self._expires = grown(self._expires, _NEVER)
        self._changed = grown(self._changed, 0)

    def _write(self, position: int, row: dict[str, Any]) -> None:
        vector = row.pop("embedding")
        self._vectors[position] = vector
        self._norms[position] = np.linalg.norm(vector)
        self._latest[position] = row["is_latest"]
        self._inference[position] = row["is_inference"]
        self._forgotten[position] = row["is_forgotten"]
        expires = row["expires_at"]
        self._expires[position] = _NEVER if expires is None else _micros(expires)
        self._changed[position] = row["changed_in"]
        # Keywords repeat across facts: one string each, not one per fact that holds it.
        row["lexical_terms"] = [sys.intern(term) for term in row["lexical_terms"]]
        self._rows[position] = row
        self._row_bytes += _row_bytes(row)
        for term in set(row["lexical_terms"]):
            self._holders.setdefault(term, set()).add(position)
            self._holder_arrays.pop(term, None)

    def _unhold(self, position: int) -> None:
        for term in set(self._rows[position]["lexical_terms"]):
            holders = self._holders.get(term)
            if holders is not None:
                holders.discard(position)
                if not holders:
                    # No key outlives its last holder: a forgotten fact's words leave the
                    # process with it (ADR 0015), and the index does not grow with dead terms.
                    del self._holders[term]
                self._holder_arrays.pop(term, None)

    def _holders_of(self, term: str) -> npt.NDArray[np.int64]:
        cached = self._holder_arrays.get(term)
        if cached is None:
            holders = self._holders.get(term)
            if not holders:
                # Not cached: a query's words that no fact holds (a forgotten fact's, asked
                # about by name) would otherwise stay in the process, one entry per word.
                return _NO_HOLDERS
            cached = np.fromiter(sorted(holders), dtype=np.int64)
            self._holder_arrays[term] = cached
        return cached

    def search(
        self, query: SearchQuery, vector: npt.NDArray[Any], now: datetime
    ) -> list[SearchHit]:
        """The `limit` best visible facts by fused score reaching the threshold, best first,
        ties by id (a memories-mode search without metadata filters)."""
        size = len(self._rows)
        if size == 0 or query.limit <= 0:
            return []
        query_vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            # `einsum`, not `@`: numpy's BLAS splits a matrix-vector product over threads that
            # spin against the query's embedding on a busy machine (a throwaway measurement on
            # 2 cores, 10,000 x 384: 6 ms of wall and CPU under load, against 0.65 ms here).
            dots = np.einsum("ij,j->i", self._vectors[:size], query_vector)
            cosine = dots.astype(np.float64) / (
                self._norms[:size].astype(np.float64) * float(np.linalg.norm(query_vector))
            )
        visible = self._visible(query, now, size)
        scores = np.minimum(cosine, 1.0)
        self._lift(query, scores, visible)
        # A zero vector has no cosine: the database's `score >= -1` drops its NaN too, and
        # counts the fact among the searched ones all the same, as `_lift` did.
        scores[~visible | np.isnan(cosine)] = -np.inf
        candidates = np.flatnonzero(scores >= query.threshold)
        if len(candidates) > query.limit:
            # Everything tied with the limit-th score stays in: ties are broken by id below.
            kth = np.partition(scores[candidates], len(candidates) - query.limit)
            candidates = candidates[scores[candidates] >= kth[len(candidates) - query.limit]]
        ranked = sorted(
            ((int(p), float(scores[p])) for p in candidates),
            key=lambda hit: (-hit[1], self._rows[hit[0]]["id"]),
        )[: query.limit]
        return [self._hit(position, score, now) for position, score in ranked]

    def _visible(self, query: SearchQuery, now: datetime, size: int) -> npt.NDArray[np.bool_]:
        visible = np.ones(size, dtype=np.bool_)
        if not query.include_superseded:
            visible &= self._latest[:size]
        if not query.include_inferred:
            visible &= ~self._inference[:size]
        if not query.include_forgotten:
            visible &= ~self._forgotten[:size]
            visible &= self._expires[:size] > _micros(now)
        return visible

    def _lift(
        self, query: SearchQuery, scores: npt.NDArray[np.float64], visible: npt.NDArray[np.bool_]
    ) -> None:
        """Each visible holder's cosine replaced by its fused score: the weights are the IDF
        among the visible facts, added in query order as `coverage` adds them."""
        terms = query_terms(query.text)
        if not terms:
            return
        holders = []
        for term in terms:
            positions = self._holders_of(term)
            holders.append(positions[visible[positions]])
        searched = int(np.count_nonzero(visible))
        frequency = {t: len(p) for t, p in zip(terms, holders, strict=True)}
        weights = idf_weights(terms, frequency, searched)
        total = sum(weights)
        if total <= 0.0:
            return
        held = np.zeros(len(scores), dtype=np.float64)
        for positions, weight in zip(holders, weights, strict=True):
            held[positions] += weight
        lifted = np.flatnonzero(held)
        scores[lifted] = fused_scores(scores[lifted], held[lifted] / total)

    def _hit(self, position: int, score: float, now: datetime) -> SearchHit:
        row = self._rows[position]
        hidden = bool(self._forgotten[position]) or bool(self._expires[position] <= _micros(now))
        return to_hit({**row, "is_forgotten": hidden}, HitKind.MEMORY, score)


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND


def _row_bytes(row: dict[str, Any]) -> int:
    text = row["text"]
    return _ROW_OVERHEAD + len(text) + len(row["relations"] or "") + len(row["metadata"] or "")
