"""`SupermemoryMemoryBackend`: the memory port on Supermemory's v5 API, via the official SDK.

- Transcripts -> `add` with our document id (prefixed `tr-`), the interaction `date`, the
  content rendered `role: text`, and `dreaming="instant"` (batched mode: "dynamic"). Instant
  ingests poll `documents.get` until chunks and memories are both done.
- Records -> `add` with `taskType="superrag"` (chunks only, no fact extraction) under `rec-`
  ids, then read back and compared, so a record is stored exactly as written.
- Search -> our mode, threshold and limit; inferred, superseded, forgotten and expired hits are
  dropped unless asked; both `memory` and `chunk` are read.
- Forget -> `memories.forget`; expiry -> our ledger (see `supermemory_ledger`), applied as a
  forget when due and filtered out of results at once; drop -> namespace delete.
- Every call runs under our own deadline and retry policy (`supermemory_calls`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime

import httpx
import structlog
from supermemory import AsyncSupermemory

from factledger.adapters.supermemory.calls import CallPolicy, Deadline, call
from factledger.adapters.supermemory.documents import SupermemoryDocuments
from factledger.adapters.supermemory.ledger import Expiry, SupermemoryLedger, passed, pending
from factledger.adapters.supermemory.mapping import (
    TRANSCRIPT_PREFIX,
    memory_fact,
    relations_of,
    version_of,
)
from factledger.adapters.supermemory.memories import SupermemoryMemories
from factledger.adapters.supermemory.search import run_search
from factledger.application.clocks import Clock
from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryNotFoundError,
    MemoryTimeoutError,
    MemoryUnavailableError,
)
from factledger.application.memory.rules import validate_namespace
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

log = structlog.get_logger(__name__)


def _at(entry: Expiry | None) -> datetime | None:
    return entry.at if entry is not None else None


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class SupermemoryMemoryBackend:
    """The memory port over Supermemory v5; one namespace per subject, as the port asks.

    Port inputs are trusted: the composition root wraps it in `ValidatingMemoryBackend`.
    """

    name = "supermemory"
    # v5 memories carry no slot, no condition and no source message indexes: none declared.
    capabilities: frozenset[Capability] = frozenset()

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        http_client: httpx.AsyncClient | None = None,
        policy: CallPolicy | None = None,
        ingest_timeout_s: float = 120.0,
        clock: Clock | None = None,
        expiry_cache_s: float = 30.0,
    ) -> None:
        self._policy = policy or CallPolicy()
        self._owned_http = http_client is None
        self._http = http_client or httpx.AsyncClient()
        # max_retries=0: retries and timeouts are ours (see supermemory_calls).
        self._client = AsyncSupermemory(
            api_key=api_key,
            base_url=base_url,
            http_client=self._http,
            max_retries=0,
            timeout=self._policy.attempt_timeout_s,
        )
        self._ingest_timeout_s = ingest_timeout_s
        self._clock: Clock = clock or SystemClock()
        self._documents = SupermemoryDocuments(self._client, self._policy)
        self._memories = SupermemoryMemories(self._client, self._policy)
        self._ledger = SupermemoryLedger(self._client, self._policy, cache_s=expiry_cache_s)
        self._background: set[asyncio.Task[None]] = set()
        self._applying: set[str] = set()

    def _deadline(self) -> Deadline:
        return Deadline(self._policy.timeout_s)

    # ----------------------------------------------------------------- documents

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
        return await self._documents.send_transcript(
            namespace,
            document_id,
            transcript,
            occurred_at=occurred_at,
            metadata=meta,
            mode=mode,
            deadline=Deadline(self._ingest_timeout_s),
        )

    async def processing_status(self, namespace: Namespace, document_id: str) -> ProcessingStatus:
        doc_id = TRANSCRIPT_PREFIX + document_id
        return await self._documents.status(namespace, document_id, doc_id, self._deadline())

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
        # The service chunks and embeds the document it stores, and a record must read back
        # verbatim: the body is what it indexes, whatever the search text.
        meta = dict(metadata or {})
        deadline = Deadline(self._ingest_timeout_s)
        await self._documents.put_record(namespace, record_id, kind, body_json, meta, deadline)

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        return await self._documents.get_record(namespace, record_id, self._deadline())

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        wanted = list(dict.fromkeys(record_ids))
        deleted, _missing = await self._documents.delete_records(
            namespace, wanted, self._deadline()
        )
        log.info("memory.records_deleted", backend=self.name, deleted=len(deleted))
        return ForgetResult(
            forgotten=tuple(i for i in wanted if i in deleted),
            missing=tuple(i for i in wanted if i not in deleted),
        )

    # ---------------------------------------------------------------------- search

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        deadline = self._deadline()
        entries = await self._ledger.expiries(namespace, deadline)
        now = self._clock.now()
        if pending(entries, now):
            self._apply_in_background(namespace, pending(entries, now))
        expired = passed(entries, now)
        return await run_search(
            self._client, self._policy, deadline, namespace, query, expired=expired
        )

    # -------------------------------------------------------------------- memories

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        deadline = self._deadline()
        await self.apply_due_expiries(namespace)
        reasons = await self._ledger.reasons(namespace, deadline) if include_forgotten else {}
        entries = await self._ledger.expiries(namespace, deadline)
        listed = await self._memories.listed(
            namespace,
            include_superseded=include_superseded,
            include_forgotten=include_forgotten,
            limit=limit,
            offset=offset,
            deadline=deadline,
        )
        return [
            memory_fact(
                memory,
                relations=relations,
                forget_reason=reasons.get(memory.id),
                expires_at=_at(entries.get(memory.id)),
            )
            for memory, relations in listed
        ]

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        deadline = self._deadline()
        entries = await self._ledger.expiries(namespace, deadline)
        if memory_id in pending(entries, self._clock.now()):
            await self._apply_expiries(namespace, {memory_id})
        details = await self._memories.details(namespace, memory_id, deadline)
        reason = None
        if details.is_forgotten:
            reason = (await self._ledger.reasons(namespace, deadline, memory_id)).get(memory_id)
        return memory_fact(
            details,
            relations=relations_of(details.included, version=version_of(details)),
            forget_reason=reason,
            expires_at=_at(entries.get(memory_id)),
        )

    async def forget(
        self, namespace: Namespace, memory_ids: Sequence[str], *, reason: str
    ) -> ForgetResult:
        return await self._forget(
            namespace, list(dict.fromkeys(memory_ids)), reason, self._deadline()
        )

    async def _forget(
        self, ns: str, ids: list[str], reason: str | None, deadline: Deadline
    ) -> ForgetResult:
        forgotten, missing = await self._memories.forget(ns, ids, deadline)
        if forgotten and reason is not None:
            await self._ledger.record_reason(ns, forgotten, reason, deadline)
        log.info(
            "memory.forgotten", backend=self.name, forgotten=len(forgotten), missing=len(missing)
        )
        return ForgetResult(forgotten=tuple(forgotten), missing=tuple(missing))

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None:
        deadline = self._deadline()
        await self._memories.details(namespace, memory_id, deadline, related=False)
        await self._ledger.set_expiry(namespace, memory_id, at, deadline)

    async def apply_due_expiries(self, namespace: Namespace) -> int:
        """Forgets every memory whose expiry has passed; returns how many. Safe to repeat."""
        ns = validate_namespace(namespace)
        entries = await self._ledger.expiries(ns, self._deadline())
        due = pending(entries, self._clock.now())
        if due:
            await self._apply_expiries(ns, due)
        return len(due)

    async def _apply_expiries(self, ns: str, due: set[str]) -> None:
        deadline = self._deadline()
        entries = await self._ledger.expiries(ns, deadline)
        await self._forget(ns, sorted(due), None, deadline)  # expiry leaves no forget reason
        for memory_id in sorted(due):
            entry = entries.get(memory_id)
            if entry is not None:
                await self._ledger.set_expiry(ns, memory_id, entry.at, deadline, applied=True)
        log.info("memory.expiries_applied", backend=self.name, count=len(due))

    def _apply_in_background(self, ns: str, due: set[str]) -> None:
        if ns in self._applying:  # one apply per namespace at a time; the next search retries
            return
        self._applying.add(ns)
        task = asyncio.create_task(self._quietly(ns, due))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _quietly(self, ns: str, due: set[str]) -> None:
        try:
            await self._apply_expiries(ns, due)
        except Exception as exc:  # a failed apply is retried by the next search or list
            log.warning(
                "memory.expiries_deferred", backend=self.name, error_type=type(exc).__name__
            )
        finally:
            self._applying.discard(ns)

    # ------------------------------------------------------------------ namespaces

    async def drop_namespace(self, namespace: Namespace) -> None:
        self._ledger.drop(namespace)
        with contextlib.suppress(MemoryNotFoundError):  # already gone: dropping is idempotent
            await call(
                "namespaces.delete",
                lambda t: self._client.namespaces.delete(namespace, timeout=t),
                self._policy,
                self._deadline(),
            )
        log.info("memory.namespace_dropped", backend=self.name)

    async def health(self) -> BackendHealth:
        try:
            await call(
                "namespaces.list",
                lambda t: self._client.namespaces.list(limit=1, timeout=t),
                self._policy,
                self._deadline(),
            )
        except (MemoryUnavailableError, MemoryTimeoutError, InvalidMemoryInputError) as exc:
            return BackendHealth(ok=False, backend=self.name, detail=type(exc).__name__)
        return BackendHealth(ok=True, backend=self.name)

    async def close(self) -> None:
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        if self._owned_http:
            await self._http.aclose()
