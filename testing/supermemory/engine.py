"""The local Supermemory server's state and write semantics, independent of HTTP.

- A document goes `queued` -> `done` after `ProcessingTiming.processing_s` (its chunks then
  become searchable) and `dreamingStatus` goes `dreaming` -> `done` after `dreaming_s` (its
  memories then exist). `dreaming="instant"` uses `instant_s` for both (0 by default: done
  by the next request). `taskType="superrag"` builds chunks only and never dreams.
- Time moves on only when a request arrives (`advance`), under one lock, oldest document date
  first, so later facts supersede earlier ones as the real batch pipeline promises.
- Re-adding a caller id with the same content is a no-op answered `done`; with other content
  it appends: only the lines not seen before are mined again.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from factledger.application.memory.ports import Embedder, Extractor
from factledger.testing.supermemory.dreaming import Dreamer
from factledger.testing.supermemory.model import Chunk, Document, NamespaceState, chunk_text

JsonObject = dict[str, Any]


class EngineNotFoundError(LookupError):
    """No such namespace, document or memory; `what` names the kind for the 404 body."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} not found")
        self.what = what


class EngineInvalidError(ValueError):
    """A request the service refuses with 400 (its message is the error)."""


class EngineConflictError(ValueError):
    """A request the service refuses with 409 (its message is the error)."""


@dataclass(frozen=True, slots=True)
class ProcessingTiming:
    """Seconds from `add` until chunks (`processing_s`) and memories (`dreaming_s`) are ready.

    Batched ("dynamic") dreaming on the real service lags by minutes; pass e.g.
    `dreaming_s=180` to reproduce that.
    """

    processing_s: float = 0.0
    dreaming_s: float = 0.0
    instant_s: float = 0.0
    read_after_write_404_s: float = 0.0  # upstream answered 404 for seconds after an add


STAGES = ("queued", "extracting", "chunking", "embedding", "indexing")


class SupermemoryEngine:
    """Namespaces of documents, chunks and memories, with the processing pipeline."""

    def __init__(
        self,
        extractor: Extractor,
        embedder: Embedder,
        *,
        timing: ProcessingTiming | None = None,
        seed: int = 0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.embedder = embedder
        self.timing = timing or ProcessingTiming()
        self.namespaces: dict[str, NamespaceState] = {}
        self.lock = asyncio.Lock()
        self._rng = random.Random(seed)
        self.monotonic = monotonic  # processing time; tests pass a fake to step through stages
        self._seq = 0
        self.dreamer = Dreamer(extractor=extractor, embedder=embedder, new_id=self.new_id)

    def new_id(self, prefix: str) -> str:
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        return prefix + "_" + "".join(self._rng.choice(alphabet) for _ in range(20))

    def state(self, namespace: str, *, create: bool = False) -> NamespaceState:
        state = self.namespaces.get(namespace)
        if state is None:
            if not create:
                raise EngineNotFoundError("Namespace")
            state = self.namespaces[namespace] = NamespaceState()
        return state

    # ------------------------------------------------------------------ processing

    async def advance(self) -> None:
        """Runs every processing step whose time has come (called under `lock`)."""
        now = self.monotonic()
        due = [
            (state, doc)
            for state in self.namespaces.values()
            for doc in state.documents.values()
            if doc.status != "failed"
            and (
                (doc.status != "done" and doc.ready_at <= now)
                or (doc.dreaming_status != "done" and doc.dream_at <= now)
            )
        ]
        for state in self.namespaces.values():
            for doc in state.documents.values():
                if doc.status in STAGES and doc.ready_at > now:
                    # In between, `status` walks the documented stages in proportion to time.
                    span = max(doc.ready_at - doc.queued_at, 1e-9)
                    index = int(len(STAGES) * (now - doc.queued_at) / span)
                    doc.status = STAGES[max(0, min(index, len(STAGES) - 1))]
        due.sort(key=lambda pair: (pair[1].date or "", pair[1].seq))
        for state, doc in due:
            if doc.status != "done" and doc.ready_at <= now:
                await self._build_chunks(state, doc)
            if doc.status == "done" and doc.dreaming_status != "done" and doc.dream_at <= now:
                pending, doc.pending = doc.pending, ""
                if doc.task_type == "memory" and pending.strip():
                    try:
                        await self.dreamer.dream(state, doc, pending)
                    except Exception:  # any extraction failure fails the document, as upstream
                        doc.status = "failed"
                doc.dreaming_status = "done"
                doc.updated_at = datetime.now(UTC)

    async def _build_chunks(self, state: NamespaceState, doc: Document) -> None:
        for chunk_id in doc.chunk_ids:
            state.chunks.pop(chunk_id, None)
        pieces = chunk_text(doc.content)
        vectors = await self.embedder.embed(pieces)
        doc.chunk_ids = []
        now = datetime.now(UTC)
        for position, (piece, vector) in enumerate(zip(pieces, vectors, strict=True)):
            chunk = Chunk(self.new_id("chk"), doc.id, position, piece, now, vector)
            state.chunks[chunk.id] = chunk
            doc.chunk_ids.append(chunk.id)
        doc.status = "done"
        if doc.task_type == "superrag":
            doc.dreaming_status = "done"
        doc.updated_at = now

    def _schedule(self, doc: Document) -> None:
        now = self.monotonic()
        doc.queued_at = now
        if doc.dreaming == "instant":
            doc.ready_at = doc.dream_at = now + self.timing.instant_s
        else:
            doc.ready_at = now + self.timing.processing_s
            doc.dream_at = now + max(self.timing.dreaming_s, self.timing.processing_s)
        doc.status, doc.dreaming_status = "queued", "dreaming"

    # ---------------------------------------------------------------------- writes

    def add(self, namespace: str, body: JsonObject) -> JsonObject:
        state = self.state(namespace, create=True)
        caller_id: str | None = body.get("id")
        existing = state.document(caller_id) if caller_id else None
        if existing is not None:
            return self._append(existing, body)
        now = datetime.now(UTC)
        self._seq += 1
        doc = Document(
            id=self.new_id("doc"),
            caller_id=caller_id,
            content=body["content"],
            metadata=dict(body.get("metadata") or {}),
            date=body.get("date"),
            task_type=body.get("taskType", "memory"),
            dreaming=body.get("dreaming", "dynamic"),
            created_at=now,
            updated_at=now,
            ready_at=0.0,
            dream_at=0.0,
            pending=body["content"],
            seq=self._seq,
        )
        self._schedule(doc)
        doc.visible_at = doc.queued_at + self.timing.read_after_write_404_s
        state.documents[doc.id] = doc
        if caller_id:
            state.by_caller_id[caller_id] = doc.id
        return {"id": doc.id, "status": doc.status}

    def _append(self, doc: Document, body: JsonObject) -> JsonObject:
        if body["content"] == doc.content:
            if "metadata" in body:
                doc.metadata = dict(body["metadata"])  # metadata-only: applied in place
            return {"id": doc.id, "status": "done" if doc.status == "done" else doc.status}
        seen = set(doc.content.splitlines())
        doc.pending += "\n".join(ln for ln in body["content"].splitlines() if ln not in seen)
        doc.content = body["content"]
        doc.metadata = dict(body.get("metadata", doc.metadata))
        doc.dreaming = body.get("dreaming", doc.dreaming)
        doc.updated_at = datetime.now(UTC)
        self._schedule(doc)
        return {"id": doc.id, "status": doc.status}

    def update(self, namespace: str, any_id: str, body: JsonObject) -> JsonObject:
        doc = self.state(namespace).document(any_id)
        if doc is None:
            raise EngineNotFoundError("Document")
        if "metadata" in body:
            doc.metadata = dict(body["metadata"])
        if "date" in body:
            doc.date = body["date"]
        if "content" in body and body["content"] != doc.content:
            doc.content = doc.pending = body["content"]  # a replace reprocesses everything
            self._schedule(doc)
        doc.updated_at = datetime.now(UTC)
        return {"id": doc.id, "status": doc.status}

    def delete_documents(self, namespace: str, ids: list[str]) -> JsonObject:
        """Permanent: the document, its chunks and the memories derived from it."""
        state = self.namespaces.get(namespace) or NamespaceState()
        count, errors = 0, []
        for any_id in ids:
            doc = state.document(any_id)
            if doc is None:
                errors.append({"id": any_id, "error": "Document not found"})
                continue
            for chunk_id in doc.chunk_ids:
                state.chunks.pop(chunk_id, None)
            for memory_id in doc.memory_ids:
                state.memories.pop(memory_id, None)
            del state.documents[doc.id]
            if doc.caller_id:
                state.by_caller_id.pop(doc.caller_id, None)
            count += 1
        return {"count": count, "errors": errors}

    def forget(self, namespace: str, ids: list[str]) -> JsonObject:
        """Soft forget, per id, partial success; forgetting twice is not an error. `matches`
        lists the memories this call forgot and `count` counts them (the spec: "memories
        selected by the operation, whether previewed or forgotten")."""
        state = self.namespaces.get(namespace) or NamespaceState()
        matched, errors = [], []
        for memory_id in ids:
            memory = state.memories.get(memory_id)
            if memory is None:
                errors.append({"id": memory_id, "error": "Memory not found"})
                continue
            if not memory.is_forgotten:
                memory.is_forgotten = True
                memory.updated_at = datetime.now(UTC)
                matched.append({"id": memory.id, "memory": memory.text})
        return {"count": len(matched), "errors": errors, "matches": matched}

    def delete_namespace(self, namespace: str, move_to: str | None = None) -> JsonObject:
        """Deletes the namespace and its content; with `move_to`, moves its documents, chunks
        and memories into that namespace first (created if need be) and answers `queued`, as
        the service does (its moves complete asynchronously; here, before the answer)."""
        if move_to is not None and move_to == namespace:
            raise EngineInvalidError("moveTo: the destination is the namespace being deleted")
        state = self.state(namespace)
        if move_to is None:
            del self.namespaces[namespace]
            return {
                "status": "deleted",
                "namespace": namespace,
                "deletedDocumentsCount": len(state.documents),
                "deletedMemoriesCount": len(state.memories),
            }
        target = self.state(move_to, create=True)
        for doc in state.documents.values():
            if doc.caller_id and doc.caller_id in target.by_caller_id:
                raise EngineConflictError(f"moveTo: document id {doc.caller_id} exists there")
        target.documents.update(state.documents)
        target.chunks.update(state.chunks)
        target.memories.update(state.memories)
        target.by_caller_id.update(state.by_caller_id)
        del self.namespaces[namespace]
        return {
            "status": "queued",
            "operationId": f"op_{uuid.uuid4().hex[:16]}",
            "namespace": namespace,
            "moveTo": move_to,
        }
