"""`CalibratedMemoryBackend`: a self-hosted backend whose scores are calibrated relevance.

The backend ranks by its embedder's raw similarity; this wrapper turns the query's threshold
(calibrated relevance) into the raw similarity the backend filters on, and each
hit's raw score into relevance. The mapping is monotone, so the order and the limit are the
backend's own. Hybrid search scores by rank fusion, not similarity: its threshold (which gates
the semantic half) is translated, its fused scores are left as they are.
"""

from __future__ import annotations

from dataclasses import replace

from factledger.application.memory.calibration import Calibration
from factledger.application.memory.forwarding import ForwardingMemoryBackend
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, SearchHit, SearchMode, SearchQuery


class CalibratedMemoryBackend(ForwardingMemoryBackend):
    """Implements `MemoryBackend` over `inner`, with `search` on the calibrated scale; every
    other call is delegated unchanged."""

    def __init__(self, inner: MemoryBackend, calibration: Calibration) -> None:
        super().__init__(inner)
        self.calibration = calibration

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        calibration = self.calibration
        raw_query = replace(query, threshold=calibration.raw_at(query.threshold))
        hits = await self.inner.search(namespace, raw_query)
        if query.mode is SearchMode.HYBRID:
            return hits
        calibrated = [replace(h, score=calibration.relevance(h.score)) for h in hits]
        # The raw threshold is rounded through a logarithm: the calibrated one has the last word.
        return [h for h in calibrated if h.score >= query.threshold]
