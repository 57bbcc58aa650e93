"""Ports of this use case: the roles it needs, as Protocols; adapters implement them.

Each port's docstring states the contract its shared test suite checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
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

Vectors = npt.NDArray[np.float32]


class MemoryBackend(Protocol):
    """A memory engine holding one isolated namespace per subject.

    - Isolation is structural: nothing stored in one namespace is ever returned for another,
      whatever the query or filters.
    - Transcripts take the extraction path: facts are extracted, linked (updates / extends /
      derives) and made searchable; `instant` mode finishes before the call returns.
    - Records take the verbatim path: stored exactly as written, never mined for facts,
      searchable as chunks. Writing the same id with the same body again is a no-op; with a
      different body it raises `MemoryConflictError` (records are immutable; a new version of
      something gets a new id).
    - A record's chunks are cut from its `search_text` when one is given (a rendering of the
      body's own values, without keys, ids or timestamps), else from its body: the text whose
      vectors and words find it; a chunk hit's text is that piece. `get_record` still returns
      the body verbatim. The search text is not part of the record's identity: writing it
      again with another one is a no-op. An engine that indexes on its own service
      (Supermemory) indexes the body.
    - `delete_records` is erasure, not a soft forget: the records, their chunks and vectors are
      gone for good (`get_record` raises not found, no search returns them); ids not found are
      reported in `missing`, so deleting twice is fine; other namespaces are never touched.
    - Re-ingesting a transcript under the same document id is a no-op.
    - Search excludes inferred, superseded and forgotten facts unless asked; scores never rise
      down the list; threshold and limit are honoured.
    - `capabilities` says which fact fields the backend fills (see `Capability`); a field
      outside them is always empty (None or ()), never guessed.
    - Only the port's own errors cross it (see `application.errors`).
    """

    name: str
    capabilities: frozenset[Capability]

    async def ingest_transcript(
        self,
        namespace: Namespace,
        document_id: str,
        transcript: Sequence[Message],
        *,
        occurred_at: datetime,
        metadata: Metadata | None = None,
        mode: IngestMode = IngestMode.INSTANT,
    ) -> ProcessingStatus: ...

    async def processing_status(
        self, namespace: Namespace, document_id: str
    ) -> ProcessingStatus: ...

    async def put_record(
        self,
        namespace: Namespace,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: Metadata | None = None,
        *,
        search_text: str | None = None,
    ) -> None: ...

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord: ...

    async def delete_records(
        self, namespace: Namespace, record_ids: Sequence[str]
    ) -> ForgetResult: ...

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]: ...

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]: ...

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact: ...

    async def forget(
        self, namespace: Namespace, memory_ids: Sequence[str], *, reason: str
    ) -> ForgetResult: ...

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None: ...

    async def drop_namespace(self, namespace: Namespace) -> None: ...

    async def health(self) -> BackendHealth: ...

    async def close(self) -> None: ...


class Extractor(Protocol):
    """Turns a transcript into facts about the subject ("dreaming" for self-hosted backends).

    - Only the subject's own messages become stated facts; agent, staff and system lines never
      become facts about anyone.
    - Hedges and conditions are kept verbatim; nothing is inferred from names.
    - Deterministic for a given request (the rule extractor) or schema-validated (LLM ones).
    """

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]: ...


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors of a fixed dimension (cosine = dot product)."""

    dimension: int
    model_id: str

    async def embed(self, texts: Sequence[str]) -> Vectors: ...
