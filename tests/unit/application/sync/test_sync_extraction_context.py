"""The sync hands the backend each session's extraction context (tenant, subject kind,
channel, conversation type) in the transcript's metadata, so the backend's extractor reads it
with the session's guidance, however late it extracts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionContext,
    ExtractionRequest,
)
from factledger.application.memory.record_ids import namespace_for
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


@dataclass
class Seeing:
    """The rule extractor, noting the context of every request."""

    inner: RuleExtractor = field(default_factory=RuleExtractor)
    seen: list[ExtractionContext] = field(default_factory=list)

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        self.seen.append(request.context)
        return await self.inner.extract(request)


async def test_the_backend_extracts_a_session_with_its_context() -> None:
    clock = ManualClock(T0)
    ledger = Ledger(popo_env(), clock=clock)
    extractor = Seeing()
    backend = InMemoryMemoryBackend(extractor=extractor, embedder=HashingEmbedder(), clock=clock)
    sid = ledger.register_subject(RegisterSubject("acme", "customer", "cust-8")).subject_id
    said = (Message(Role.SUBJECT, "The export keeps failing on Windows 11.", T0),)
    ledger.record_session(
        RecordSession(
            "acme", sid, "t-1", Channel.EMAIL, T0, T0, said, conversation_type="support_ticket"
        )
    )
    feed = LedgerEventFeed(ledger)
    report = await SyncWorker(SyncPorts(InMemorySyncStore(), feed, feed, backend)).run_once()

    assert report.dead == 0
    assert extractor.seen == [ExtractionContext("acme", "customer", "email", "support_ticket")]
    memories = await backend.list_memories(namespace_for(sid))
    assert {m.slot for m in memories} >= {"issue", "environment:windows_11"}
    ledger.close()
