"""One namespace's facts held in the process, and a memories-mode search over them.

The rows are those a pgvector search reads (`feed._COLUMNS`), kept as arrays where a search
needs them whole: the vectors and their norms, the visibility flags, the expiries, and each
keyword's holders. The ranking is the pgvector search's (`lexical`'s IDF over the visible
facts, `fused_score`, ties by id), and the hits are built by the same `to_hit` from the same
columns.

- With a graph of its vectors (`index_vectors`, from `MirrorSettings.graph_from` facts), a
  search scores the graph's nearest `depth` facts and the keyword holders outside them that
  could still reach the bar, as the database's bounded search does.
- Without one, or when the list holds too few visible facts, it scores every fact (one
  matrix product): exact.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from factledger.adapters.pgvector.mirror.ann import VectorGraph
from factledger.adapters.pgvector.search import to_hit
from factledger.application.clocks import epoch_microseconds
from factledger.application.memory.lexical import (
    LEXICAL_WEIGHT,
    fused_scores,
    keyword_coverage,
    query_terms,
)
from factledger.application.memory.types import HitKind, SearchHit, SearchQuery

_NO_HOLDERS: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
# How deep a search reads the graph's list: the database's bounded search's depth.
GRAPH_DEPTH = 100
# The bar sits this far under the limit-th score, as the database's bound leans (1e-9 tie,
# 1e-9 margin: fetching more cannot change an answer, fetching less could).
_LEAN = 2e-9
# How far a cosine computed here may exceed faiss's float32 inner product of the same unit
# vectors: the list's farthest is raised by it before it bounds the facts outside the list.
_GRAPH_SLACK = 1e-5
# Expiries as integer microseconds since the epoch: exact, so an expiry equal to the moment
# searched hides the fact, as the database's `expires_at > now` does.
_NEVER = np.iinfo(np.int64).max
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
        # The nearest-vectors graph, once built (`index_vectors`), and the positions whose
        # vector changed after it took them: those are always scored.
        self._graph: VectorGraph | None = None
        self._regraphed: set[int] = set()
        self.depth = GRAPH_DEPTH
        self.breadth = GRAPH_DEPTH

    @property
    def nbytes(self) -> int:
        """The mirror's size as the budget counts it: its arrays, and an estimate of its rows."""
        arrays = (self._vectors, self._norms, self._latest, self._inference, self._forgotten)
        graph = 0 if self._graph is None else self._graph.nbytes
        return (
            sum(a.nbytes for a in (*arrays, self._expires, self._changed)) + self._row_bytes + graph
        )

    def index_vectors(self) -> None:
        """Builds the graph of the vectors (~0.3 s for 10,000 of 384 dimensions): searches
        then read the `depth` nearest facts instead of scanning every one. Run in a thread."""
        graph = VectorGraph(self._vectors.shape[1])
        graph.add(self._unit(0, len(self._rows)))
        self._graph = graph

    def _unit(self, start: int, stop: int) -> npt.NDArray[np.float32]:
        norms = self._norms[start:stop, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            unit = np.where(norms > 0, self._vectors[start:stop] / norms, 0.0)
        return unit.astype(np.float32)

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
                if self._graph is not None and not np.array_equal(
                    self._vectors[position], row["embedding"]
                ):
                    self._regraphed.add(position)
            self._write(position, row)
        if self._graph is not None and len(self._graph) < len(self._rows):
            self._graph.add(self._unit(len(self._graph), len(self._rows)))

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
        self._expires[position] = _NEVER if expires is None else epoch_microseconds(expires)
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
                    # process with it, and the index does not grow with dead terms.
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
        query_norm = float(np.linalg.norm(query_vector))
        visible = self._visible(query, now, size)
        terms = query_terms(query.text, query.asked_about)
        holders = [positions[visible[positions]] for positions in map(self._holders_of, terms)]
        held = keyword_coverage(size, terms, holders, int(np.count_nonzero(visible)))
        graph = self._graph
        # A list as deep as the namespace would be a scan with more steps.
        if graph is not None and query_norm > 0 and size > max(self.depth, 4 * query.limit):
            found = self._listed(graph, query, query_vector / query_norm, visible, held)
            if found is not None:
                return self._ranked(query, found, now)
        scanned = self._scanned(query, query_vector, query_norm, visible, held)
        return self._ranked(query, scanned, now)

    def _cosines(
        self,
        positions: npt.NDArray[np.int64] | slice,
        query_vector: npt.NDArray[np.float32],
        query_norm: float,
    ) -> npt.NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            # `einsum`, not `@`: numpy's BLAS splits a matrix-vector product over threads that
            # spin against the query's embedding on a busy machine, many times slower than this
            # single-threaded product.
            dots = np.einsum("ij,j->i", self._vectors[positions], query_vector)
            cosines: npt.NDArray[np.float64] = dots.astype(np.float64) / (
                self._norms[positions].astype(np.float64) * query_norm
            )
        return cosines

    def _scanned(
        self,
        query: SearchQuery,
        query_vector: npt.NDArray[np.float32],
        query_norm: float,
        visible: npt.NDArray[np.bool_],
        held: npt.NDArray[np.float64] | None,
    ) -> dict[int, float]:
        """Every fact scored: the fused scores of the visible ones."""
        size = len(visible)
        cosine = self._cosines(slice(0, size), query_vector, query_norm)
        scores = np.minimum(cosine, 1.0)
        if held is not None:
            lifted = np.flatnonzero(held)
            scores[lifted] = fused_scores(scores[lifted], held[lifted])
        # A zero vector has no cosine: the database's `score >= -1` drops its NaN too, and
        # counts the fact among the searched ones all the same (the IDF's population).
        scores[~visible | np.isnan(cosine)] = -np.inf
        return _best(scores, np.arange(size), query.limit)

    def _listed(
        self,
        graph: VectorGraph,
        query: SearchQuery,
        unit_query: npt.NDArray[np.float32],
        visible: npt.NDArray[np.bool_],
        held: npt.NDArray[np.float64] | None,
    ) -> dict[int, float] | None:
        """The graph's nearest `depth` facts, and the keyword holders outside them that could
        still reach the bar, scored: what the database's bounded search ranks, with its
        assumption that no fact outside the list is nearer than the list's farthest. None when
        the list holds fewer than `limit` visible facts (superseded or forgotten ones crowd it):
        the caller scans."""
        listed, farthest = graph.nearest(unit_query, max(self.depth, 4 * query.limit), self.breadth)
        cosine = self._cosines(listed, unit_query, 1.0)
        usable = visible[listed] & ~np.isnan(cosine)
        trusted = usable
        if self._regraphed:
            # Listed by the vector the graph took, which changed since: scored, not counted.
            trusted = usable & ~np.isin(listed, np.fromiter(self._regraphed, dtype=np.int64))
        if np.count_nonzero(trusted) < query.limit:
            return None
        # No fact outside the list is nearer than its farthest by the graph's vectors (those
        # that changed are scored below); `_GRAPH_SLACK` covers faiss's float32 products.
        outside = farthest + _GRAPH_SLACK
        if self._regraphed:  # vectors changed after the graph took them: always scored
            changed = np.setdiff1d(np.fromiter(self._regraphed, dtype=np.int64), listed)
            listed = np.concatenate([listed, changed])
            cosine = np.concatenate([cosine, self._cosines(changed, unit_query, 1.0)])
            usable = visible[listed] & ~np.isnan(cosine)
        scores = np.minimum(cosine, 1.0)
        if held is not None:
            scores = fused_scores(scores, held[listed])
        scores[~usable] = -np.inf
        best = _best(scores, listed, query.limit)
        if held is None:
            return best
        reaching = scores[scores >= query.threshold]
        kth = -np.inf
        if len(reaching) >= query.limit:
            kth = np.partition(reaching, len(reaching) - query.limit)[len(reaching) - query.limit]
        bar = max(float(query.threshold), float(kth)) - _LEAN
        # A holder outside the list is at most as near as the list's farthest: only those
        # whose keywords could lift that cosine to the bar can enter (`holder_bound`).
        others = visible & (held > 0) & (np.minimum(1.0, outside + LEXICAL_WEIGHT * held) >= bar)
        others[listed] = False
        extra = np.flatnonzero(others)
        if len(extra):
            extra_cosine = self._cosines(extra, unit_query, 1.0)
            extra_scores = fused_scores(np.minimum(extra_cosine, 1.0), held[extra])
            extra_scores[np.isnan(extra_cosine)] = -np.inf
            best.update(_best(extra_scores, extra, query.limit))
        return best

    def _ranked(
        self, query: SearchQuery, scored: dict[int, float], now: datetime
    ) -> list[SearchHit]:
        ranked = sorted(
            ((p, s) for p, s in scored.items() if s >= query.threshold),
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
            visible &= self._expires[:size] > epoch_microseconds(now)
        return visible

    def _hit(self, position: int, score: float, now: datetime) -> SearchHit:
        row = self._rows[position]
        hidden = bool(self._forgotten[position]) or bool(
            self._expires[position] <= epoch_microseconds(now)
        )
        return to_hit({**row, "is_forgotten": hidden}, HitKind.MEMORY, score)


def _best(
    scores: npt.NDArray[np.float64], positions: npt.NDArray[np.int64], limit: int
) -> dict[int, float]:
    """The positions of the best `limit` scores, with every one tied with the limit-th: ties
    are broken by id when ranked."""
    keep = np.flatnonzero(scores > -np.inf)
    if len(keep) > limit:
        kth = np.partition(scores[keep], len(keep) - limit)[len(keep) - limit]
        keep = keep[scores[keep] >= kth]
    return {int(positions[k]): float(scores[k]) for k in keep}


def _row_bytes(row: dict[str, Any]) -> int:
    text = row["text"]
    return _ROW_OVERHEAD + len(text) + len(row["relations"] or "") + len(row["metadata"] or "")
