"""A ledger (POPO), the rule extractor and a sync worker whose proposer is the product's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import UUID

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.ports import Extractor
from factledger.application.proposals.modes import ProposalModes
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

TENANT, KIND = "northwind", "lead"
MODEL = Actor(ActorKind.MODEL, "rule@1")


@dataclass
class Rig:
    clock: ManualClock
    ledger: Ledger
    store: InMemorySyncStore
    backend: InMemoryMemoryBackend
    extractor: Extractor
    modes: ProposalModes
    ticks: list[float] = field(default_factory=lambda: [0.0])  # the queue's monotonic clock
    subjects: list[UUID] = field(default_factory=list)

    def expire_leases(self) -> None:
        self.ticks[0] += 3600.0

    def worker(self, extractor: Extractor | None = None) -> SyncWorker:
        feed = LedgerEventFeed(self.ledger)
        proposer = SessionProposer(
            self.ledger, extractor or self.extractor, MODEL, modes=self.modes
        )
        ports = SyncPorts(self.store, feed, feed, self.backend, proposer=proposer)
        return SyncWorker(ports, SyncOptions(backoff_s=0.0))

    def register(self, ref: str = "lead-7", kind: str = KIND, tenant: str = TENANT) -> UUID:
        return self.ledger.register_subject(RegisterSubject(tenant, kind, ref)).subject_id

    def record(
        self,
        subject_id: UUID,
        session_id: str,
        at: datetime,
        *lines: tuple[Role, str],
        tenant: str = TENANT,
    ) -> None:
        self.clock.set(at)
        transcript = tuple(Message(role, text, at) for role, text in lines)
        self.ledger.record_session(
            RecordSession(tenant, subject_id, session_id, Channel.CHAT, at, at, transcript)
        )

    def subject(self, subject_id: UUID, tenant: str = TENANT) -> Subject:
        return self.ledger.subject(tenant, subject_id)


def day(month: int, d: int) -> datetime:
    return datetime(2026, month, d, 10, 0, tzinfo=UTC)


@pytest.fixture
def rig() -> Iterator[Rig]:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock)
    extractor = RuleExtractor()
    backend = InMemoryMemoryBackend(extractor=extractor, embedder=HashingEmbedder(), clock=clock)
    ticks = [0.0]
    store = InMemorySyncStore(monotonic=lambda: ticks[0])
    yield Rig(clock, ledger, store, backend, extractor, ProposalModes(), ticks)
    ledger.close()
