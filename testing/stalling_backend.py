"""A `MemoryBackend` wrapper that stalls (38 s by default, the incident behind the budgets)
or raises on chosen calls, to prove that recall fails open within its budget."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from factledger.application.errors import MemoryUnavailableError
from factledger.application.memory.types import (
    BackendHealth,
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
from factledger.application.ports import MemoryBackend
from factledger.domain.transcript import Message

INCIDENT_STALL_S = 38.0


class Fault(StrEnum):
    NONE = "none"
    STALL = "stall"  # sleep `stall_s`, then answer normally
    RAISE = "raise"  # raise MemoryUnavailableError at once


class StallingBackend:
    """Delegates to `inner`; reads (`search`, `get_memory`, `list_memories`) obey `fault`.

    - `faulty_calls` narrows which reads misbehave; writes always pass through.
    - `calls` counts the faulty reads started; `cancelled` those cancelled mid-stall.
    """

    def __init__(
        self,
        inner: MemoryBackend,
        *,
        fault: Fault = Fault.STALL,
        stall_s: float = INCIDENT_STALL_S,
        faulty_calls: frozenset[str] = frozenset({"search", "get_memory", "list_memories"}),
    ) -> None:
        self.inner = inner
        self.name = f"stalling:{inner.name}"
        self.capabilities = inner.capabilities
        self.fault = fault
        self.stall_s = stall_s
        self.faulty_calls = faulty_calls
        self.calls = 0
        self.cancelled = 0

    async def _misbehave(self, call: str) -> None:
        if self.fault is Fault.NONE or call not in self.faulty_calls:
            return
        self.calls += 1
        if self.fault is Fault.RAISE:
            raise MemoryUnavailableError(f"{call}: injected outage")
        try:
            await asyncio.sleep(self.stall_s)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise

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
    ) -> None:
        await self.inner.put_record(namespace, record_id, kind, body_json, metadata)

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        return await self.inner.get_record(namespace, record_id)

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        return await self.inner.delete_records(namespace, record_ids)

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        await self._misbehave("search")
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
        await self._misbehave("list_memories")
        return await self.inner.list_memories(
            namespace,
            include_superseded=include_superseded,
            include_forgotten=include_forgotten,
            limit=limit,
            offset=offset,
        )

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        await self._misbehave("get_memory")
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
