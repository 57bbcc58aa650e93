"""`InMemoryMemoryBackend`: the whole memory port in process memory, with real search.

It is the backend of the embedded default and the reference the contract suite is written
against; nothing here is a test double.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import structlog

from factledger.adapters.in_memory.graph import Provenance, apply_facts, known_facts
from factledger.adapters.in_memory.search import search_namespace
from factledger.adapters.in_memory.store import (
    DocumentState,
    NamespaceState,
    StoredChunk,
    term_counts,
)
from factledger.application.clocks import Clock
from factledger.application.errors import (
    MemoryConflictError,
    MemoryNotFoundError,
)
from factledger.application.memory.chunking import split_chunks
from factledger.application.memory.extraction import ExtractionContext, ExtractionRequest
from factledger.application.memory.lexical import subject_label, vector_text
from factledger.application.memory.ports import Embedder, Extractor, Vectors
from factledger.application.memory.query_vector import query_vector
from factledger.application.memory.types import (
    ALL_CAPABILITIES,
    BackendHealth,
    Capability,
    ForgetResult,
    IngestMode,
    MemoryFact,
    Metadata,
    Namespace,
    ProcessingState,
    ProcessingStatus,
    SearchHit,
    SearchQuery,
    StoredRecord,
)
from factledger.domain.transcript import Message

log = structlog.get_logger(__name__)


class InMemoryMemoryBackend:
    """The memory port over per-namespace dicts and numpy arrays.

    - Facts come from the `Extractor`, vectors from the `Embedder`, time from the `Clock`.
    - Memory ids derive from (namespace, document id, fact key), so a replay is a no-op.
    - Batched ingests queue for one background task; `processing_status` shows progress.
    - Nothing survives the process: it is for development, demos and tests.
    - Inputs are trusted: the composition root wraps it in `ValidatingMemoryBackend`.
    """

    name = "in_memory"
    capabilities: frozenset[Capability] = ALL_CAPABILITIES

    def __init__(self, *, extractor: Extractor, embedder: Embedder, clock: Clock) -> None:
        self._extractor = extractor
        self._embedder = embedder
        self._clock = clock
        self._spaces: dict[Namespace, NamespaceState] = {}
        self._queue: asyncio.Queue[tuple[Namespace, str]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    def _space(self, ns: Namespace) -> NamespaceState:
        if ns not in self._spaces:
            self._spaces[ns] = NamespaceState(self._embedder.dimension)
        return self._spaces[ns]

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
        meta = dict(metadata or {})
        mode = IngestMode(mode)
        space = self._space(namespace)
        existing = space.documents.get(document_id)
        if existing is not None and existing.status.state is not ProcessingState.FAILED:
            return existing.status
        doc = DocumentState(
            document_id=document_id,
            transcript=tuple(transcript),
            occurred_at=occurred_at,
            metadata=meta,
            status=ProcessingStatus(document_id, ProcessingState.QUEUED),
        )
        space.documents[document_id] = doc
        if mode is IngestMode.BATCHED:
            self._ensure_worker()
            self._queue.put_nowait((namespace, document_id))
            return doc.status
        await self._process(namespace, space, doc)
        return doc.status

    async def processing_status(self, namespace: Namespace, document_id: str) -> ProcessingStatus:
        space = self._spaces.get(namespace)
        if space is None or document_id not in space.documents:
            raise MemoryNotFoundError(f"document {document_id}")
        return space.documents[document_id].status

    def _ensure_worker(self) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while True:
            ns, document_id = await self._queue.get()
            try:
                space = self._spaces.get(ns)
                doc = space.documents.get(document_id) if space is not None else None
                if space is not None and doc is not None:
                    await self._process(ns, space, doc)
            finally:
                self._queue.task_done()

    async def _process(self, ns: Namespace, space: NamespaceState, doc: DocumentState) -> None:
        started = time.perf_counter()
        doc.status = ProcessingStatus(doc.document_id, ProcessingState.EXTRACTING)
        try:
            request = ExtractionRequest(
                transcript=doc.transcript,
                occurred_at=doc.occurred_at,
                known=known_facts(space, self._clock.now()),
                context=ExtractionContext.from_metadata(doc.metadata),
            )
            facts = await self._extractor.extract(request)
            doc.status = ProcessingStatus(doc.document_id, ProcessingState.INDEXING)
            label = subject_label(doc.metadata)
            vectors = await self._embed(
                [vector_text(fact.text, label, fact.slot) for fact in facts]
            )
            async with space.lock:
                if self._spaces.get(ns) is not space:
                    return  # the namespace was dropped meanwhile: nothing to index into
                source = Provenance(
                    ns, doc.document_id, doc.occurred_at, doc.metadata, doc.transcript
                )
                created = apply_facts(space, source, facts, vectors, self._clock.now())
        except Exception as exc:  # extractor and embedder are pluggable: any failure fails the doc
            doc.status = ProcessingStatus(
                doc.document_id, ProcessingState.FAILED, error_type=type(exc).__name__
            )
            log.warning(
                "memory.ingest_failed", document_id=doc.document_id, error_type=type(exc).__name__
            )
            return
        doc.status = ProcessingStatus(doc.document_id, ProcessingState.DONE, facts=len(created))
        log.info(
            "memory.ingested",
            backend=self.name,
            document_id=doc.document_id,
            facts=len(created),
            duration_ms=round((time.perf_counter() - started) * 1e3, 2),
        )

    async def _embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._embedder.dimension), dtype=np.float32)
        return await self._embedder.embed(list(texts))

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
        meta = dict(metadata or {})
        record = StoredRecord(record_id=record_id, kind=kind, body_json=body_json, metadata=meta)
        space = self._space(namespace)
        existing = space.records.get(record_id)
        if existing is not None:
            if existing != record:
                raise MemoryConflictError(f"record {record_id} exists with another body")
            return
        pieces = split_chunks(body_json if search_text is None else search_text)
        vectors = await self._embed(pieces)
        async with space.lock:
            if record_id in space.records:  # a concurrent writer won; same rule applies
                if space.records[record_id] != record:
                    raise MemoryConflictError(f"record {record_id} exists with another body")
                return
            rows = space.chunk_vectors.append(vectors)
            for index, (text, row) in enumerate(zip(pieces, rows, strict=True)):
                space.add_chunk(
                    StoredChunk(
                        f"{record_id}#{index}", record_id, text, row, term_counts(text), meta
                    )
                )
            space.records[record_id] = record

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        space = self._spaces.get(namespace)
        if space is None or record_id not in space.records:
            raise MemoryNotFoundError(f"record {record_id}")
        return space.records[record_id]

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        space = self._spaces.get(namespace)
        deleted: list[str] = []
        missing: list[str] = []
        if space is None:
            return ForgetResult(forgotten=(), missing=tuple(dict.fromkeys(record_ids)))
        async with space.lock:
            for record_id in dict.fromkeys(record_ids):
                if space.records.pop(record_id, None) is None:
                    missing.append(record_id)
                else:
                    deleted.append(record_id)
                    space.drop_chunks_of(record_id)
        log.info("memory.records_deleted", backend=self.name, deleted=len(deleted))
        return ForgetResult(forgotten=tuple(deleted), missing=tuple(missing))

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        space = self._spaces.get(namespace)
        if space is None:
            return []
        vector = await query_vector(query, self._embedder)
        return search_namespace(space, query, vector, self._clock.now())

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        space = self._spaces.get(namespace)
        if space is None:
            return []
        now = self._clock.now()
        chosen = [
            fact
            for fact in space.fact_rows
            if (include_superseded or fact.is_latest)
            and (include_forgotten or not fact.hidden(now))
        ]
        return [fact.to_memory(now) for fact in chosen[offset : offset + limit]]

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        space = self._spaces.get(namespace)
        if space is None or memory_id not in space.facts:
            raise MemoryNotFoundError(f"memory {memory_id}")
        return space.facts[memory_id].to_memory(self._clock.now())

    async def forget(
        self, namespace: Namespace, memory_ids: Sequence[str], *, reason: str
    ) -> ForgetResult:
        space = self._spaces.get(namespace)
        facts = space.facts if space is not None else {}
        forgotten: list[str] = []
        missing: list[str] = []
        for memory_id in dict.fromkeys(memory_ids):
            fact = facts.get(memory_id)
            if fact is None:
                missing.append(memory_id)
                continue
            if not fact.forgotten:  # the first reason stands: forgetting twice is a no-op
                fact.forgotten, fact.forget_reason = True, reason
                fact.handed_on = frozenset()  # as pgvector's forget clears it
            forgotten.append(memory_id)
        log.info(
            "memory.forgotten", backend=self.name, forgotten=len(forgotten), missing=len(missing)
        )
        return ForgetResult(forgotten=tuple(forgotten), missing=tuple(missing))

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None:
        space = self._spaces.get(namespace)
        if space is None or memory_id not in space.facts:
            raise MemoryNotFoundError(f"memory {memory_id}")
        space.facts[memory_id].expires_at = at

    async def drop_namespace(self, namespace: Namespace) -> None:
        self._spaces.pop(namespace, None)
        log.info("memory.namespace_dropped", backend=self.name)

    async def health(self) -> BackendHealth:
        return BackendHealth(ok=True, backend=self.name, detail=f"{len(self._spaces)} namespaces")

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
