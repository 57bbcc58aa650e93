"""The vector list of a mirror's search: an HNSW graph in the process (faiss).

A scan of every vector reads the whole matrix from memory at each search (~0.6 ms for 10,000
facts of 384 dimensions, bound by memory bandwidth); the graph reads a few hundred. The list
it gives is the nearest `depth` facts by cosine over every fact of the namespace, as the
database's partial HNSW index gives, and the search ranks exactly from there
(`MirroredNamespace.search`).

- Positions are faiss's labels: vectors are added in position order, and a mirror's
  positions only grow.
- faiss's OpenMP threads are set to one on import: a search is one query, and a pool of
  threads waiting on a 2-core machine spins against the query's embedding (as numpy's BLAS
  did, see `state`).
- faiss is imported when the first graph is built, in a thread (the load's), not when the
  process starts: ~150 ms.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import numpy.typing as npt

# faiss's HNSW: 16 links per node, 64 candidates while building; `depth` while searching.
_LINKS = 16
_BUILD_BREADTH = 64

_IMPORT_LOCK = threading.Lock()
_faiss: Any = None


def _library() -> Any:
    global _faiss
    with _IMPORT_LOCK:
        if _faiss is None:
            import faiss

            faiss.omp_set_num_threads(1)
            _faiss = faiss
    return _faiss


class VectorGraph:
    """Unit vectors of a namespace's facts, nearest first by inner product (cosine)."""

    def __init__(self, dimension: int) -> None:
        faiss = _library()
        self._index = faiss.IndexHNSWFlat(dimension, _LINKS, faiss.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = _BUILD_BREADTH

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, unit_vectors: npt.NDArray[np.float32]) -> None:
        """Appends vectors, labelled by their positions (the next ones)."""
        if len(unit_vectors):
            self._index.add(np.ascontiguousarray(unit_vectors, dtype=np.float32))

    def nearest(
        self, unit_query: npt.NDArray[np.float32], depth: int, breadth: int
    ) -> tuple[npt.NDArray[np.int64], float]:
        """The positions of the `depth` nearest vectors (fewer when the graph holds fewer),
        searched `breadth` wide (faiss's `efSearch`), and the farthest one's inner product:
        no vector the graph holds outside the list is nearer."""
        self._index.hnsw.efSearch = max(breadth, depth)
        similarities, labels = self._index.search(unit_query.reshape(1, -1), depth)
        found = labels[0] >= 0
        positions: npt.NDArray[np.int64] = labels[0][found].astype(np.int64)
        farthest = float(similarities[0][found].min()) if found.any() else -np.inf
        return positions, farthest

    @property
    def nbytes(self) -> int:
        # The vectors (float32) and the links: 2 x `_LINKS` on the lowest level, about one
        # level more in all, 4 bytes each.
        return len(self) * (int(self._index.d) * 4 + 2 * _LINKS * 4 * 2)
