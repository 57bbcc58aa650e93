"""PostgreSQL + pgvector implementation of the `MemoryBackend` port.

- Isolation is structural: each call is one transaction bound to its namespace
  (`set_config('app.namespace', ..., true)`), and Row-Level Security on every table shows no
  other namespace to the application role, which neither owns the tables nor bypasses RLS
  (checked at start-up).
- Search is exact within a namespace through a btree on `(namespace, ...)`; a namespace past
  tens of thousands of facts gets its own partial HNSW index (`pgvector_ann.py`).
- Transcripts go through the `Extractor`; batched ingests are queued in `documents` and
  processed by a worker task; records are stored verbatim and searchable as chunks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime

import psycopg
import structlog

from factledger.adapters.pgvector import ingest as ingest
from factledger.adapters.pgvector import memories as memories
from factledger.adapters.pgvector import records as records
from factledger.adapters.pgvector.ann import AnnReport, AnnSettings
from factledger.adapters.pgvector.compaction_status import read_status
from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.adapters.pgvector.connection import (
    PgvectorConnections,
    check_role_and_dimension,
    port_errors,
)
from factledger.adapters.pgvector.filters import metadata_json
from factledger.adapters.pgvector.migrations_ahead import MigrationsAhead
from factledger.adapters.pgvector.queue import IngestWorker
from factledger.adapters.pgvector.schema import SchemaOptions, apply_migrations
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.adapters.pgvector.upkeep import COMPACTION_LOCK_TIMEOUT_MS, PgvectorUpkeep
from factledger.application.clocks import Clock
from factledger.application.errors import (
    MemoryNotFoundError,
    MemoryUnavailableError,
)
from factledger.application.memory.compaction import CompactionStatus
from factledger.application.memory.ports import Embedder, Extractor
from factledger.application.memory.rules import validate_namespace, validate_search_query
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

__all__ = ["PgvectorConfig", "PgvectorMemoryBackend"]

log = structlog.get_logger(__name__)


def schema_options(config: PgvectorConfig, dimension: int) -> SchemaOptions:
    """What `config`'s migrations are parametrised by, for an embedder of `dimension`."""
    return SchemaOptions(config.schema, config.app_role, dimension, config.create_app_role)


class PgvectorMemoryBackend:
    """The self-hosted memory backend; build it with `await PgvectorMemoryBackend.open(...)`.

    Port inputs are trusted: the composition root wraps it in `ValidatingMemoryBackend`.
    """

    name = "pgvector"
    capabilities: frozenset[Capability] = ALL_CAPABILITIES

    def __init__(
        self,
        config: PgvectorConfig,
        connections: PgvectorConnections,
        *,
        embedder: Embedder,
        extractor: Extractor,
        clock: Clock,
    ) -> None:
        self.config = config
        self.db = connections
        self._embedder = embedder
        self._extractor = extractor
        self._clock = clock
        self.searcher = PgvectorSearcher(
            connections, embedder=embedder, clock=clock, plan=config.search
        )
        self.upkeep = PgvectorUpkeep(config)
        self.worker = IngestWorker(connections, embedder=embedder, extractor=extractor, clock=clock)

    @classmethod
    async def open(
        cls,
        config: PgvectorConfig,
        *,
        embedder: Embedder,
        extractor: Extractor,
        clock: Clock,
        migrations: MigrationsAhead | None = None,
    ) -> PgvectorMemoryBackend:
        """Migrates (or takes the result of `migrations`, started ahead for the same
        database and options), opens the pool and checks the role and the dimension."""
        options = schema_options(config, embedder.dimension)
        applied = None
        if migrations is not None:
            applied = await migrations.applied(config.admin_conninfo, options)
        if applied is None:
            with port_errors("migrate"):
                applied = await apply_migrations(config.admin_conninfo, options)
        standby = None
        if config.read_conninfo is not None:
            standby = PgvectorConnections(
                config.read_conninfo,
                schema=config.schema,
                min_size=0,
                max_size=config.pool_max,
                timeouts=config.timeouts,
            )
        connections = PgvectorConnections(
            config.app_conninfo,
            schema=config.schema,
            min_size=config.pool_min,
            max_size=config.pool_max,
            timeouts=config.timeouts,
            standby=standby,
        )
        with port_errors("connect"):
            await connections.open()
        backend = cls(config, connections, embedder=embedder, extractor=extractor, clock=clock)
        try:
            await check_role_and_dimension(connections, config.schema, embedder.dimension)
        except BaseException:
            await connections.close()
            raise
        log.info("pgvector.opened", migrations_applied=len(applied), pool_max=config.pool_max)
        return backend

    # --- transcripts -------------------------------------------------------------------------

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
        meta = metadata_json(dict(metadata or {}))
        doc = ingest.DocumentRow(
            document_id,
            IngestMode(mode).value,
            ingest.transcript_to_json(transcript),
            occurred_at,
            meta,
        )
        if doc.mode == IngestMode.BATCHED.value:
            with port_errors("ingest"):
                async with self.db.bound(namespace) as conn:
                    existing = await ingest.claim_document(conn, doc, ProcessingState.QUEUED)
            self.worker.wake(start=self.config.start_worker)
            return existing or ProcessingStatus(document_id, ProcessingState.QUEUED)
        with port_errors("ingest"):
            return await self._ingest_now(namespace, doc, transcript)

    async def _ingest_now(
        self, ns: Namespace, doc: ingest.DocumentRow, transcript: Sequence[Message]
    ) -> ProcessingStatus:
        started = time.perf_counter()
        now = self._clock.now()
        existing, known = await ingest.status_and_known(self.db, ns, doc.document_id, now)
        if existing is not None and existing.state is not ProcessingState.FAILED:
            return existing
        try:
            extraction = await ingest.extract(
                self._extractor,
                self._embedder,
                transcript,
                occurred_at=doc.occurred_at,
                known=known,
                context=ingest.context_of(doc),
                label=ingest.label_of(doc),
            )
        except Exception as exc:  # extractor and embedder are pluggable: any failure fails the doc
            error = type(exc).__name__
            log.warning("pgvector.ingest_failed", document_id=doc.document_id, error_type=error)
            async with self.db.bound(ns, lock=True) as conn:
                existing = await ingest.claim_document(
                    conn, doc, ProcessingState.FAILED, error_type=error
                )
            return existing or ProcessingStatus(
                doc.document_id, ProcessingState.FAILED, error_type=error
            )
        async with self.db.bound(ns, lock=True) as conn:
            existing = await ingest.claim_document(conn, doc, ProcessingState.DONE)
            if existing is not None:
                return existing
            facts = await ingest.write_extraction(conn, ns, doc, extraction, now=self._clock.now())
        log.info(
            "pgvector.ingested",
            document_id=doc.document_id,
            facts=facts,
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
        )
        return ProcessingStatus(doc.document_id, ProcessingState.DONE, facts)

    async def processing_status(self, namespace: Namespace, document_id: str) -> ProcessingStatus:
        with port_errors("status"):
            async with self.db.bound(namespace) as conn:
                status = await ingest.read_status(conn, document_id)
        if status is None:
            raise MemoryNotFoundError(f"document {document_id}")
        return status

    # --- records -----------------------------------------------------------------------------

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
        record = StoredRecord(record_id, kind, body_json, meta)
        with port_errors("put_record"):
            # Embedded first and written in one transaction: a record that exists already (a
            # replay, or a concurrent writer that won) costs an embedding, every new one a
            # transaction less, and transactions are what bound sync's throughput.
            chunks = records.record_chunks(body_json if search_text is None else search_text)
            vectors = await self._embedder.embed(chunks)
            at_once = records.insert_at_once(record, metadata_json(meta), chunks, vectors)
            if at_once is not None:
                (written,) = await self.db.in_one_trip(namespace, [at_once])
                if written[0][0]:
                    return
            async with self.db.bound(namespace) as conn:
                if at_once is None and await records.insert(
                    conn, record, metadata_json(meta), chunks, vectors
                ):
                    return
                existing = await records.stored(conn, record_id)
            if existing is not None:
                records.check_same(existing, record)

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        with port_errors("get_record"):
            async with self.db.bound(namespace) as conn:
                record = await records.stored(conn, record_id)
        if record is None:
            raise MemoryNotFoundError(f"record {record_id}")
        return record

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        wanted = list(dict.fromkeys(record_ids))
        with port_errors("delete_records"):
            async with self.db.bound(namespace) as conn:
                found = await records.delete(conn, wanted) if wanted else set()
        if found:
            await self._vacuum("records", "chunks")
        log.info("pgvector.records_deleted", deleted=len(found))
        return ForgetResult(
            forgotten=tuple(i for i in wanted if i in found),
            missing=tuple(i for i in wanted if i not in found),
        )

    # --- search ------------------------------------------------------------------------------

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        return await self.searcher.search(namespace, query)

    async def explain_search(self, namespace: Namespace, query: SearchQuery) -> str:
        """The plan PostgreSQL picks for this search (operators: is the ANN index used?)."""
        ns = validate_namespace(namespace)
        validate_search_query(query)
        return await self.searcher.explain(ns, query)

    # --- memories ----------------------------------------------------------------------------

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        with port_errors("list_memories"):
            async with self.db.bound(namespace) as conn:
                return await memories.list_facts(
                    conn,
                    now=self._clock.now(),
                    include_superseded=include_superseded,
                    include_forgotten=include_forgotten,
                    limit=limit,
                    offset=offset,
                )

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        with port_errors("get_memory"):
            async with self.db.bound(namespace) as conn:
                fact = await memories.get_fact(conn, memory_id, now=self._clock.now())
        if fact is None:
            raise MemoryNotFoundError(f"memory {memory_id}")
        return fact

    async def forget(
        self, namespace: Namespace, memory_ids: Sequence[str], *, reason: str
    ) -> ForgetResult:
        with port_errors("forget"):
            # The namespace's lock, as every writer of `memories` holds it: the keyword counts
            # the triggers keep are updated by one writer of a namespace at a time.
            async with self.db.bound(namespace, lock=True) as conn:
                result = await memories.forget(conn, memory_ids, reason=reason)
        if result.forgotten:
            # This process's mirror forgets at once too; the others' follow at their next
            # search of the namespace, or drop it once idle.
            self.searcher.mirrors.drop(namespace)
            await self._vacuum("memories", *memories.DERIVED_TABLES, "documents")
        log.info("pgvector.forgotten", forgotten=len(result.forgotten), missing=len(result.missing))
        return result

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None:
        with port_errors("expire"):
            async with self.db.bound(namespace, lock=True) as conn:
                found = await memories.expire(conn, memory_id, at=at)
        if not found:
            raise MemoryNotFoundError(f"memory {memory_id}")

    async def drop_namespace(self, namespace: Namespace) -> None:
        with port_errors("drop_namespace"):
            async with self.db.bound(namespace, lock=True) as conn:
                await memories.drop(conn)
        self.searcher.mirrors.drop(namespace)
        await self._vacuum(*memories.NAMESPACE_TABLES, *memories.DERIVED_TABLES)
        self.searcher.forget_ann()
        log.info("pgvector.namespace_dropped")

    async def _vacuum(self, *tables: str) -> None:
        await self.upkeep.vacuum(*tables)

    async def compact_erased(
        self, *, every_table: bool = False, lock_timeout_ms: int = COMPACTION_LOCK_TIMEOUT_MS
    ) -> tuple[str, ...]:
        """Rewrites the tables erased from since the last compaction (`PgvectorUpkeep`)."""
        return await self.upkeep.compact_erased(
            every_table=every_table, lock_timeout_ms=lock_timeout_ms
        )

    async def compaction_status(self) -> CompactionStatus:
        """The shared record of the erasure compaction, for `/metrics`."""
        with port_errors("compaction_status"):
            async with await psycopg.AsyncConnection.connect(self.config.app_conninfo) as conn:
                return await read_status(conn, self.config.schema)

    async def maintain_ann_indexes(self, settings: AnnSettings | None = None) -> AnnReport:
        """Gives namespaces past the threshold their own partial HNSW index (as the owner)."""
        report = await self.upkeep.maintain_ann_indexes(settings)
        self.searcher.forget_ann()
        return report

    async def health(self) -> BackendHealth:
        try:
            with port_errors("health"):
                async with self.db.unbound() as conn:
                    await conn.execute("SELECT 1")
        except MemoryUnavailableError as exc:
            return BackendHealth(ok=False, backend=self.name, detail=str(exc))
        return BackendHealth(ok=True, backend=self.name)

    async def close(self) -> None:
        await self.worker.stop()
        await self.searcher.mirrors.close()
        await self.db.close()
