"""`ValidatingMemoryBackend`: the memory port's input rules, checked once for every backend.

The composition root wraps each backend it opens, so adapters receive only inputs that passed
`application.memory.rules`: a bad request fails identically (with `InvalidMemoryInputError`,
before any engine is touched) whatever sits behind the port.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from factledger.application.memory.forwarding import ForwardingMemoryBackend
from factledger.application.memory.rules import (
    validate_aware,
    validate_id,
    validate_ids,
    validate_ingest,
    validate_json_body,
    validate_limit,
    validate_metadata,
    validate_namespace,
    validate_reason,
    validate_search_query,
    validate_search_text,
)
from factledger.application.memory.types import (
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


class ValidatingMemoryBackend(ForwardingMemoryBackend):
    """Implements `MemoryBackend` by validating each call's inputs, then delegating to `inner`.

    - Metadata reaches `inner` as the plain, checked copy `validate_metadata` returns.
    - `name`, `capabilities`, `health` and `close` are the inner backend's.
    """

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
        ns, meta = validate_ingest(namespace, document_id, transcript, occurred_at, metadata)
        return await self.inner.ingest_transcript(
            ns, document_id, transcript, occurred_at=occurred_at, metadata=meta, mode=mode
        )

    async def processing_status(self, namespace: Namespace, document_id: str) -> ProcessingStatus:
        ns = validate_namespace(namespace)
        validate_id("document_id", document_id)
        return await self.inner.processing_status(ns, document_id)

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
        ns = validate_namespace(namespace)
        validate_id("record_id", record_id)
        validate_id("kind", kind)
        validate_json_body(body_json)
        meta = validate_metadata(metadata)
        if search_text is not None:
            validate_search_text(search_text)
        await self.inner.put_record(ns, record_id, kind, body_json, meta, search_text=search_text)

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        ns = validate_namespace(namespace)
        validate_id("record_id", record_id)
        return await self.inner.get_record(ns, record_id)

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        ns = validate_namespace(namespace)
        validate_ids("record_ids", record_ids)
        return await self.inner.delete_records(ns, record_ids)

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        ns = validate_namespace(namespace)
        validate_search_query(query)
        return await self.inner.search(ns, query)

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        ns = validate_namespace(namespace)
        validate_limit(limit, offset)
        return await self.inner.list_memories(
            ns,
            include_superseded=include_superseded,
            include_forgotten=include_forgotten,
            limit=limit,
            offset=offset,
        )

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        ns = validate_namespace(namespace)
        validate_id("memory_id", memory_id)
        return await self.inner.get_memory(ns, memory_id)

    async def forget(
        self, namespace: Namespace, memory_ids: Sequence[str], *, reason: str
    ) -> ForgetResult:
        ns = validate_namespace(namespace)
        validate_ids("memory_ids", memory_ids)
        validate_reason(reason)
        return await self.inner.forget(ns, memory_ids, reason=reason)

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None:
        ns = validate_namespace(namespace)
        validate_id("memory_id", memory_id)
        validate_aware("at", at)
        await self.inner.expire(ns, memory_id, at=at)

    async def drop_namespace(self, namespace: Namespace) -> None:
        await self.inner.drop_namespace(validate_namespace(namespace))
