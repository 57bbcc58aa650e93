"""Ports: the roles the use cases need, as Protocols. Adapters implement them.

Each port's docstring states the contract its shared test suite checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol
from uuid import UUID

import numpy as np
import numpy.typing as npt

from factledger.application.judgement.types import FieldStatement, Judgement, Reply
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
from factledger.application.sessions.types import ActiveSession, SafetyVerdict, SessionKey
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


class SentenceJudge(Protocol):
    """Judges what sentences say, by a learned model rather than word lists.

    - `judge` returns one `Judgement` per sentence, in order: whom it is about, hedged or
      not, a request to forget or not, a correction or change of something said before.
    - `answers` classifies each (question, reply) pair as a yes, a no or neither, in the
      language the reply was said; a reply that confirms something other than what was
      asked, or corrects its value, is not a yes.
    - `field_statements` finds the clauses of the subject's messages that state one of
      `fields` (any schema's field names), each with its probability; only the subject's
      lines are read, the agent's question before a line only helps to read it.
    - Deterministic for a given model and input; no network, no I/O beyond its loaded model.
    """

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]: ...

    async def field_statements(
        self, transcript: Sequence[Message], fields: Sequence[str]
    ) -> list[FieldStatement]: ...

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]: ...


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors of a fixed dimension (cosine = dot product)."""

    dimension: int
    model_id: str

    async def embed(self, texts: Sequence[str]) -> Vectors: ...


class Clock(Protocol):
    """The current time, passed in so the domain and the use cases stay deterministic."""

    def now(self) -> datetime: ...


class SafetyFilter(Protocol):
    """Screens one message before it reaches short-term memory.

    - A message it refuses is dropped by the caller: never buffered, recorded, sent to a
      backend or logged; only the count of withheld messages is kept.
    - The verdict's `category` is a fixed code ("payment_card", "credential", ...), never a
      fragment of the message.
    """

    async def screen(self, message: Message) -> SafetyVerdict: ...


class InstructionDetector(Protocol):
    """How likely each text is an instruction to the AI agent or the system reading the memory
    (to change its rules, role or permissions, reveal its configuration, act for someone)
    rather than something said about the subject's world. A learned classifier, not a phrase
    list: an instruction in other words is still one."""

    async def instruction_p(self, texts: Sequence[str]) -> list[float]: ...


class SessionBuffer(Protocol):
    """Short-term memory: the messages of active sessions, in a conventional table.

    - A session is named by its `SessionKey` (subject, session id): two subjects (of one
      tenant or of two) may use the same session id, and neither can see, block or end the
      other's session.
    - `open` is idempotent for the same key, channel and conversation type (returns the
      stored session, conversation type included); the same key with another channel or
      conversation type raises `SessionConflictError`.
    - `append` keeps order and returns the message's index (0, 1, ...); `append`,
      `withhold` and `messages` on an unknown session raise `SessionNotActiveError`.
    - `append(message_id=...)` is idempotent: a message id is unique within its session
      (a unique constraint in the stores), so appending it again adds nothing and returns the
      first append's index, whichever process retried.
    - `append` to a session already holding its cap (`MAX_MESSAGES` of `domain.sessions`
      unless the adapter is built with a smaller one) raises `SessionFullError`, atomically
      with the counter, so a session never grows past what its end can record; a known
      message id still returns its index.
    - `messages(last=n)` returns the n most recent messages, oldest first.
    - `discard` removes the session and its messages; discarding twice is a no-op.
    - `discard_subject` removes every session of a subject and their messages (an erasure),
      including what a write-ahead log or freed pages of the store still hold once it
      returns; it returns how many sessions it removed.
    """

    async def open(self, session: ActiveSession) -> ActiveSession: ...

    async def get(self, key: SessionKey) -> ActiveSession | None: ...

    async def append(
        self, key: SessionKey, message: Message, *, message_id: str | None = None
    ) -> int: ...

    async def withhold(self, key: SessionKey) -> int: ...

    async def messages(self, key: SessionKey, *, last: int | None = None) -> list[Message]: ...

    async def discard(self, key: SessionKey) -> None: ...

    async def discard_subject(self, subject_id: UUID) -> int: ...
