"""`ForwardingMemoryBackend`: a `MemoryBackend` that hands every call to the backend it wraps.

Wrappers (input validation, calibrated scores, injected faults) subclass it and override only
the calls they change, so a method added to the port is forwarded by every wrapper at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from factledger.application.memory.ports import MemoryBackend
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
    SearchQuery,
    StoredRecord,
)
from factledger.domain.transcript import Message


class ForwardingMemoryBackend:
    """Implements `MemoryBackend` by delegating each call, unchanged, to `inner`.

    - `name` and `capabilities` are the inner backend's unless a subclass sets its own.
    """

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.capabilities: frozenset[Capability] = inner.capabilities

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
        return await self.inner.ingest_transcript(
            namespace,
            document_id,
            transcript,
            occurred_at=occurred_at,
            metadata=metadata,
            mode=mode,
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
        *,
        search_text: str | None = None,
    ) -> None:
        await self.inner.put_record(
            namespace, record_id, kind, body_json, metadata, search_text=search_text
        )

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        return await self.inner.get_record(namespace, record_id)

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        return await self.inner.delete_records(namespace, record_ids)

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        return await self.inner.search(namespace, query)

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


def innermost_backend(backend: MemoryBackend) -> MemoryBackend:
    """The adapter behind any wrappers, for operator calls outside the port (ANN maintenance)."""
    while isinstance(backend, ForwardingMemoryBackend):
        backend = backend.inner
    return backend


# mypy checks the structural fit here, once, rather than at every wrapper's construction site.
_: type[MemoryBackend] = ForwardingMemoryBackend
