"""The batched-ingest worker of the pgvector backend.

Queued documents live in the `documents` table, so a restart loses nothing. The worker claims
one document at a time through an owner-run function that returns ids only (`FOR UPDATE SKIP
LOCKED`, so several workers share the queue), then works on it in transactions bound to that
document's namespace: queued -> extracting -> indexing -> done, or failed with the error type.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import structlog

from factledger.adapters.pgvector import ingest as ingest
from factledger.adapters.pgvector.connection import PgvectorConnections, port_errors
from factledger.application.clocks import Clock
from factledger.application.memory.ports import Embedder, Extractor
from factledger.application.memory.types import Namespace

log = structlog.get_logger(__name__)
STALE_CLAIM = timedelta(minutes=5)  # a claim older than this belonged to a worker that died
IDLE_POLL_SECONDS = 2.0


class IngestWorker:
    """Drains the queue; `wake` starts the background task on first use."""

    def __init__(
        self,
        connections: PgvectorConnections,
        *,
        embedder: Embedder,
        extractor: Extractor,
        clock: Clock,
    ) -> None:
        self._db = connections
        self._clock = clock
        self._embedder = embedder
        self._extractor = extractor
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def wake(self, *, start: bool) -> None:
        if start and self._task is None:
            self._task = asyncio.create_task(self._run(), name="pgvector-ingest-worker")
        self._wakeup.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def run_pending(self) -> int:
        """Processes queued documents until none is left; returns how many were processed."""
        processed = 0
        while (claimed := await self._claim()) is not None:
            await self._process(*claimed)
            processed += 1
        return processed

    async def _run(self) -> None:
        while True:
            try:
                await self.run_pending()
            except Exception as exc:  # the loop must outlive a database restart
                log.warning("pgvector.worker_failed", error_type=type(exc).__name__)
            self._wakeup.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), IDLE_POLL_SECONDS)

    async def _claim(self) -> tuple[Namespace, str] | None:
        with port_errors("claim"):
            async with self._db.unbound() as conn:
                cur = await conn.execute(
                    "SELECT namespace, document_id FROM claim_queued_document(%s)", [STALE_CLAIM]
                )
                row = await cur.fetchone()
        return None if row is None else (Namespace(row[0]), row[1])

    async def _process(self, ns: Namespace, document_id: str) -> None:
        try:
            async with self._db.bound(ns) as conn:
                cur = await conn.execute(
                    "SELECT mode, transcript, occurred_at, metadata::text FROM documents "
                    "WHERE document_id = %s",
                    [document_id],
                )
                row = await cur.fetchone()
                if row is None:  # the namespace was dropped meanwhile
                    return
                known = await ingest.known_facts(conn, self._clock.now())
            doc = ingest.DocumentRow(document_id, row[0], "", row[2], row[3])
            extraction = await ingest.extract(
                self._extractor,
                self._embedder,
                ingest.transcript_from_json(row[1]),
                occurred_at=doc.occurred_at,
                known=known,
                context=ingest.context_of(doc),
                label=ingest.label_of(doc),
            )
            await self._set_state(ns, document_id, "indexing")
            async with self._db.bound(ns, lock=True) as conn:
                cur = await conn.execute(
                    "SELECT 1 FROM documents WHERE document_id = %s AND state = 'indexing' "
                    "FOR UPDATE",
                    [document_id],
                )
                if await cur.fetchone() is None:  # dropped, or re-queued, meanwhile
                    return
                facts = await ingest.write_extraction(
                    conn, ns, doc, extraction, now=self._clock.now()
                )
            log.info("pgvector.batch_ingested", document_id=document_id, facts=facts)
        except Exception as exc:  # extractor and embedder are pluggable: any failure fails the doc
            log.warning(
                "pgvector.batch_failed", document_id=document_id, error_type=type(exc).__name__
            )
            await self._set_state(ns, document_id, "failed", error_type=type(exc).__name__)

    async def _set_state(
        self, ns: Namespace, document_id: str, state: str, *, error_type: str | None = None
    ) -> None:
        with port_errors("status"):
            async with self._db.bound(ns) as conn:
                await conn.execute(
                    "UPDATE documents SET state = %s, error_type = %s WHERE document_id = %s",
                    [state, error_type, document_id],
                )
