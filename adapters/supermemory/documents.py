"""Documents on Supermemory v5: transcripts (extraction path) and records (verbatim path).

- A transcript is one `add` with our id (`tr-<document_id>`), the interaction `date`, the
  content rendered `role: text` and `dreaming="instant"` (batched: "dynamic"). Re-sending a
  known id is a no-op (upstream would append), except after `failed`, when it is deleted and
  sent again. Instant ingests poll `documents.get` until chunks and memories are both done.
- A record is one `add` with `taskType="superrag"` (chunks only, never mined for facts) under
  `rec-<record_id>`, then read back and compared, so it is stored exactly as written.
- Deleting records is `documents.delete` by those ids, which v5 makes permanent (the document,
  its chunks and anything derived); per-id "not found" errors are reported as missing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import structlog
from supermemory import AsyncSupermemory

from factledger.adapters.supermemory.calls import CallPolicy, Deadline, add_verbatim, call
from factledger.adapters.supermemory.mapping import (
    KIND_RECORD,
    KIND_TRANSCRIPT,
    RECORD_KIND,
    RECORD_PREFIX,
    STATE_BY_STATUS,
    TRANSCRIPT_PREFIX,
    render_transcript,
    user_metadata,
    wire_metadata,
)
from factledger.application.errors import (
    MemoryConflictError,
    MemoryNotFoundError,
    MemoryUnavailableError,
)
from factledger.application.memory.types import (
    IngestMode,
    MetadataValue,
    ProcessingState,
    ProcessingStatus,
    StoredRecord,
)
from factledger.domain.transcript import Message

log = structlog.get_logger(__name__)
DELETE_BATCH = 100  # v5 accepts at most 100 ids per documents.delete


class SupermemoryDocuments:
    """Transcript and record documents of one Supermemory client; inputs already validated."""

    def __init__(self, client: AsyncSupermemory, policy: CallPolicy) -> None:
        self._client = client
        self._policy = policy

    async def get_document(
        self, ns: str, doc_id: str, deadline: Deadline, include: list[str] | None = None
    ) -> Any | None:
        try:
            return await call(
                "documents.get",
                lambda t: self._client.documents.get(ns, doc_id, include=include, timeout=t),
                self._policy,
                deadline,
            )
        except MemoryNotFoundError:
            return None

    async def send_transcript(
        self,
        ns: str,
        document_id: str,
        transcript: Sequence[Message],
        *,
        occurred_at: datetime,
        metadata: dict[str, MetadataValue],
        mode: IngestMode,
        deadline: Deadline,
    ) -> ProcessingStatus:
        wire = wire_metadata(
            metadata, kind=KIND_TRANSCRIPT, id=document_id, occurred_at=occurred_at.isoformat()
        )
        doc_id = TRANSCRIPT_PREFIX + document_id
        existing = await self.get_document(ns, doc_id, deadline)
        if existing is not None and existing.system.status == "failed":
            # A failed document may be retried: upstream deletes failed ones itself later.
            await call(
                "documents.delete",
                lambda t: self._client.documents.delete(ns, ids=[doc_id], timeout=t),
                self._policy,
                deadline,
            )
            existing = None
        # Otherwise re-ingesting is a no-op: upstream `add` on a known id would append instead.
        if existing is None:
            await call(
                "add",
                lambda t: self._client.add(
                    ns,
                    content=render_transcript(transcript),
                    id=doc_id,
                    metadata=wire,
                    date=occurred_at.isoformat(),
                    task_type="memory",
                    dreaming="instant" if mode is IngestMode.INSTANT else "dynamic",
                    timeout=t,
                ),
                self._policy,
                deadline,
            )
            log.info("memory.transcript_sent", backend="supermemory", messages=len(transcript))
        if mode is IngestMode.INSTANT:
            return await self.wait_settled(ns, document_id, doc_id, deadline)
        return await self.status(ns, document_id, doc_id, deadline, early_404_ok=True)

    async def status(
        self,
        ns: str,
        document_id: str,
        doc_id: str,
        deadline: Deadline,
        *,
        early_404_ok: bool = False,
    ) -> ProcessingStatus:
        doc = await self.get_document(ns, doc_id, deadline, include=["memories"])
        if doc is None:
            if early_404_ok:  # upstream can answer 404 for a few seconds after an add
                return ProcessingStatus(document_id, ProcessingState.QUEUED)
            raise MemoryNotFoundError(f"document {document_id}")
        status, dreaming = doc.system.status, doc.system.dreaming_status
        state = STATE_BY_STATUS.get(status, ProcessingState.QUEUED)
        if state is ProcessingState.FAILED:
            return ProcessingStatus(document_id, state, error_type="ProcessingFailed")
        if state is ProcessingState.DONE and dreaming != "done":
            state = ProcessingState.EXTRACTING  # chunks are ready, memories are not
        facts = len(doc.memories or ()) if state is ProcessingState.DONE else 0
        return ProcessingStatus(document_id, state, facts=facts)

    async def wait_settled(
        self, ns: str, document_id: str, doc_id: str, deadline: Deadline
    ) -> ProcessingStatus:
        pause = 0.01
        while True:
            status = await self.status(ns, document_id, doc_id, deadline, early_404_ok=True)
            if status.state in (ProcessingState.DONE, ProcessingState.FAILED):
                return status
            if deadline.remaining() <= pause:
                return status  # still processing; callers poll `processing_status`
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)

    async def put_record(
        self,
        ns: str,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: dict[str, MetadataValue],
        deadline: Deadline,
    ) -> None:
        wire = wire_metadata(metadata, kind=KIND_RECORD, id=record_id, record_kind=kind)
        doc_id = RECORD_PREFIX + record_id
        existing = await self.get_document(ns, doc_id, deadline)
        if existing is not None:
            same = (
                existing.content == body_json
                and (existing.metadata or {}).get(RECORD_KIND) == kind
                and dict(user_metadata(existing.metadata)) == metadata
            )
            if not same:
                raise MemoryConflictError(f"record {record_id} exists with another body")
            return
        await add_verbatim(self._client, ns, doc_id, body_json, wire, self._policy, deadline)
        settled = await self.wait_settled(ns, record_id, doc_id, deadline)
        stored = await self.get_document(ns, doc_id, deadline)
        if settled.state is ProcessingState.FAILED or stored is None or stored.content != body_json:
            raise MemoryUnavailableError(f"record {record_id} was not stored verbatim")

    async def delete_records(
        self, ns: str, record_ids: Sequence[str], deadline: Deadline
    ) -> tuple[set[str], set[str]]:
        """Deletes records by id (at most 100 per call, the v5 limit); (deleted, missing)."""
        deleted: set[str] = set()
        missing: set[str] = set()
        for start in range(0, len(record_ids), DELETE_BATCH):
            batch = list(record_ids[start : start + DELETE_BATCH])
            wire_ids = [RECORD_PREFIX + record_id for record_id in batch]
            try:
                result = await self._delete(ns, wire_ids, deadline)
            except MemoryNotFoundError:  # an unknown namespace holds none of them
                missing.update(batch)
                continue
            failed: set[str] = set()
            for error in result.errors or []:
                if "not found" not in error.error.lower():
                    raise MemoryUnavailableError(f"documents.delete failed for {error.id}")
                failed.add(error.id.removeprefix(RECORD_PREFIX))
            missing.update(failed)
            deleted.update(record_id for record_id in batch if record_id not in failed)
        return deleted, missing

    async def _delete(self, ns: str, ids: list[str], deadline: Deadline) -> Any:
        return await call(
            "documents.delete",
            lambda t: self._client.documents.delete(ns, ids=ids, timeout=t),
            self._policy,
            deadline,
        )

    async def get_record(self, ns: str, record_id: str, deadline: Deadline) -> StoredRecord:
        doc = await self.get_document(ns, RECORD_PREFIX + record_id, deadline)
        if doc is None or doc.content is None:
            raise MemoryNotFoundError(f"record {record_id}")
        return StoredRecord(
            record_id=record_id,
            kind=str((doc.metadata or {}).get(RECORD_KIND, "")),
            body_json=doc.content,
            metadata=user_metadata(doc.metadata),
        )
