"""A session whose transcript holds a NUL, recorded before such text was refused, syncs into
pgvector: the ledger reads it back scrubbed, so the write succeeds (PostgreSQL refuses NUL in
`text`, and the item once failed on every retry)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain import sessions
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend

pytestmark = pytest.mark.integration
JAN = datetime(2026, 1, 14, 10, tzinfo=UTC)


async def test_a_transcript_with_a_nul_recorded_long_ago_syncs_into_pgvector(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock(JAN)
    ledger = Ledger(popo_env(), clock=clock)
    ledger.register_subject(RegisterSubject("t1", "lead", "crm-1"))
    subject_id = ledger.subject_id_for("t1", "lead", "crm-1")
    with monkeypatch.context() as old_code:
        old_code.setattr(sessions, "check_session_text", lambda _: None)
        said = "We work with Supplier A\x00 at the moment."
        ledger.record_session(
            RecordSession(
                tenant="t1",
                subject_id=subject_id,
                session_id="wa-1",
                channel=Channel.WHATSAPP,
                started_at=JAN,
                ended_at=JAN,
                transcript=(Message(Role.SUBJECT, said, JAN),),
            )
        )
    async with pgvector_backend(
        postgres, embedder=HashingEmbedder(), extractor=RuleExtractor(), clock=clock
    ) as pgvector:
        backend = ValidatingMemoryBackend(pgvector)
        feed = LedgerEventFeed(ledger)
        store = InMemorySyncStore()
        worker = SyncWorker(SyncPorts(store, feed, feed, backend))

        report = await worker.run_once()

        assert (report.dead, report.retried) == (0, 0)
        assert report.done == report.fed > 0
        memories = await backend.list_memories(namespace_for(subject_id))
        assert memories
        assert all("\x00" not in memory.text for memory in memories)
    ledger.close()
