"""The proposals step reviews an imported subject's sessions in the order they happened:
the import records them oldest first, and the sync queue never hands out a subject's item
while an earlier one of that subject is pending, whichever worker claims it."""

from __future__ import annotations

import asyncio

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.importing.follow_up import count_proposals, drain_sync
from factledger.application.importing.importer import ImportOptions
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.events import SessionRecorded, SessionReviewed
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.history import HistoryShape, history_bytes

from .conftest import TENANT, Importer, stream

SHAPE = HistoryShape(subjects=3, sessions_per_subject=8, messages_per_session=4)
MODEL = Actor(ActorKind.MODEL, "rule@test")


def workers(importer: Importer, store: InMemorySyncStore, count: int) -> list[SyncWorker]:
    extractor = RuleExtractor()
    backend = InMemoryMemoryBackend(
        extractor=extractor, embedder=HashingEmbedder(), clock=importer.clock
    )
    feed = LedgerEventFeed(importer.ledger)
    proposer = SessionProposer(importer.ledger, extractor, MODEL)
    ports = SyncPorts(store, feed, feed, backend, proposer=proposer)
    return [SyncWorker(ports, SyncOptions(batch_size=3, backoff_s=0.0)) for _ in range(count)]


async def test_two_workers_review_each_subjects_imported_sessions_in_time_order(
    importer: Importer,
) -> None:
    use_case = importer.use_case()
    report = await use_case.run(stream(history_bytes(SHAPE)), ImportOptions(TENANT, "h"))
    assert report.reviews == 24
    store = InMemorySyncStore()
    # Two workers claim batches of three items side by side until the queue is empty.
    pair = workers(importer, store, 2)
    for _ in range(50):
        await asyncio.gather(*(w.run_once() for w in pair))
        if await store.pending_count() == 0:
            break
    assert await store.pending_count() == 0
    for n in range(SHAPE.subjects):
        subject_id = importer.ledger.subject_id_for(TENANT, "lead", f"crm-{n:05d}")
        stream_ = list(importer.ledger.repository.event_store.get(subject_id))
        started = {e.session_id: e.started_at for e in stream_ if isinstance(e, SessionRecorded)}
        reviewed = [e.session_id for e in stream_ if isinstance(e, SessionReviewed)]
        assert reviewed == sorted(started, key=lambda s: started[s])
        assert len(reviewed) == SHAPE.sessions_per_subject
    proposals = count_proposals(importer.ledger, after=0, sessions=use_case.recorded)
    assert proposals > 0  # every subject names its supplier in its first message


async def test_drain_runs_the_sync_until_the_queue_is_empty(importer: Importer) -> None:
    await importer.run(history_bytes(SHAPE))
    store = InMemorySyncStore()
    [worker] = workers(importer, store, 1)
    assert await drain_sync(worker, store, timeout_s=60)
    assert await store.pending_count() == 0
