"""The product's proposals on PostgreSQL: workers sharing the queue review each session once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.postgres.event_store import ensure_schema, postgres_env
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.events import SessionReviewed
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Channel, Message, Role
from factledger.projections.follower import read_events
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.integration
MODEL = Actor(ActorKind.MODEL, "rule@1")
LINES = ("We order from Initech.", "Our budget is 40k a year.", "We have switched to Globex.")


@dataclass
class Rig:
    ledger: Ledger
    store: PostgresSyncStore
    backend: InMemoryMemoryBackend

    def worker(self, name: str) -> SyncWorker:
        feed = LedgerEventFeed(self.ledger)
        proposer = SessionProposer(self.ledger, RuleExtractor(), MODEL)
        ports = SyncPorts(self.store, feed, feed, self.backend, proposer=proposer)
        return SyncWorker(ports, SyncOptions(batch_size=2, backoff_s=0.0), worker_id=name)


@pytest.fixture
async def rig(postgres: PostgresLocation) -> AsyncIterator[Rig]:
    clock = ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    ledger = Ledger(postgres_env(postgres, schema=f"ledger_{uuid.uuid4().hex[:10]}"), clock=clock)
    schema = f"sync_{uuid.uuid4().hex[:10]}"
    ensure_schema(postgres, schema)
    store = await PostgresSyncStore.connect(postgres.conninfo, schema=schema)
    backend = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    for n in range(4):
        subject = ledger.register_subject(RegisterSubject("t1", "lead", f"lead-{n}")).subject_id
        for i, text in enumerate(LINES):
            at = clock.now() + timedelta(minutes=1)
            clock.set(at)
            transcript = (Message(Role.SUBJECT, text, at),)
            session = RecordSession("t1", subject, f"s{i}", Channel.CHAT, at, at, transcript)
            ledger.record_session(session)
    yield Rig(ledger, store, backend)
    await store.close()
    ledger.close()


async def test_workers_sharing_the_queue_review_every_session_once(rig: Rig) -> None:
    reports = await asyncio.gather(*(rig.worker(f"w{n}").run_once() for n in range(3)))
    await rig.worker("sweeper").run_once()

    assert sum(r.dead for r in reports) == 0
    reviews = [
        (e.event.originator_id, e.event.session_id)
        for e in read_events(rig.ledger, after=0)
        if isinstance(e.event, SessionReviewed)
    ]
    assert len(reviews) == len(set(reviews)) == 4 * len(LINES)
    for n in range(4):
        subject = rig.ledger.subject("t1", rig.ledger.subject_id_for("t1", "lead", f"lead-{n}"))
        fields = sorted(c.field for c in subject.changes.values())
        assert fields == ["budget", "supplier", "supplier"]  # Globex supersedes Initech
        assert sorted(c.status.value for c in subject.changes.values()) == [
            "pending",
            "pending",
            "superseded",
        ]
