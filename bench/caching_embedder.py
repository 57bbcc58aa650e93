"""An `Embedder` that remembers the vectors of texts it has embedded (quality workloads only).

PrefEval re-ingests the same distractor texts into a fresh namespace for every query; caching
their vectors changes nothing in the ranking and saves minutes. The latency workload turns the
cache off, so every measured search pays for its query embedding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factledger.application.memory.ports import Embedder, Vectors

MAX_ENTRIES = 50_000


class CachingEmbedder:
    """Wraps an `Embedder`; `enabled = False` passes every call straight through."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.model_id = inner.model_id
        self.enabled = True
        self._vectors: dict[str, Vectors] = {}

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not self.enabled:
            return await self.inner.embed(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            fresh = await self.inner.embed(missing)
            if len(self._vectors) + len(missing) > MAX_ENTRIES:
                self._vectors.clear()  # a bench run stays far below this; it only caps memory
            self._vectors.update(zip(missing, fresh, strict=True))
            if any(t not in self._vectors for t in texts):  # the cap was hit mid-batch
                return await self.inner.embed(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts]).astype(np.float32, copy=False)
