"""`CalibratedMemoryBackend`: a self-hosted backend whose scores are calibrated relevance.

The backend ranks by its embedder's raw similarity; this wrapper turns the query's threshold
(calibrated relevance, ADR 0023) into the raw similarity the backend filters on, and each
hit's raw score into relevance. The mapping is monotone, so the order and the limit are the
backend's own. Hybrid search scores by rank fusion, not similarity: its threshold (which gates
the semantic half) is translated, its fused scores are left as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from factledger.application.memory.calibration import Calibration
from factledger.application.memory.types import (
    BackendHealth,
    Capability,
    ForgetResult,
    IngestMode,
    MemoryFact,
    Metadata,
    Namespace,
    ProcessingStatus,
    SearchHit,
    SearchMode,
    SearchQuery,
    StoredRecord,
)
from factledger.application.ports import MemoryBackend
from factledger.domain.transcript import Message


class CalibratedMemoryBackend:
    """Implements `MemoryBackend` over `inner`, with `search` on the calibrated scale; every
    other call is delegated unchanged."""

    def __init__(self, inner: MemoryBackend, calibration: Calibration) -> None:
        self.inner = inner
        self.calibration = calibration
        self.name = inner.name
        self.capabilities: frozenset[Capability] = inner.capabilities

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        calibration = self.calibration
        raw_query = replace(query, threshold=calibration.raw_at(query.threshold))
        hits = await self.inner.search(namespace, raw_query)
        if query.mode is SearchMode.HYBRID:
            return hits
        calibrated = [replace(h, score=calibration.relevance(h.score)) for h in hits]
        # The raw threshold is rounded through a logarithm: the calibrated one has the last word.
        return [h for h in calibrated if h.score >= query.threshold]

    async def ingest_transcript(
        self,
        namespace: Namespace,
        document_id: str,
        transcript: Sequence[Message],
        *,
        occurred_at: datetime,
        metadata: Metadata | None = None,
        mode: IngestMode = IngestMode.INSTANT,
    ) -> ProcessingStatus:
        when, meta = occurred_at, metadata
        return await self.inner.ingest_transcript(
            namespace, document_id, transcript, occurred_at=when, metadata=meta, mode=mode
        )

    async def processing_status(self, namespace: Namespace, document_id: str) -> ProcessingStatus:
        return await self.inner.processing_status(namespace, document_id)

    async def put_record(
        self,
        namespace: Namespace,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: Metadata | None = None,
    ) -> None:
        await self.inner.put_record(namespace, record_id, kind, body_json, metadata)

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        return await self.inner.get_record(namespace, record_id)

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        return await self.inner.delete_records(namespace, record_ids)

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        return await self.inner.list_memories(
            namespace,
            include_superseded=include_superseded,
            include_forgotten=include_forgotten,
            limit=limit,
            offset=offset,
        )

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        return await self.inner.get_memory(namespace, memory_id)

    async def forget(
        self, namespace: Namespace, memory_ids: Sequence[str], *, reason: str
    ) -> ForgetResult:
        return await self.inner.forget(namespace, memory_ids, reason=reason)

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None:
        await self.inner.expire(namespace, memory_id, at=at)

    async def drop_namespace(self, namespace: Namespace) -> None:
        await self.inner.drop_namespace(namespace)

    async def health(self) -> BackendHealth:
        return await self.inner.health()

    async def close(self) -> None:
        await self.inner.close()
