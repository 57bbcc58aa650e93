"""Memory switched off (recall settings, per tenant or deployment-wide): the sync writes
nothing of those tenants to the backend, while the ledger keeps recording everything."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
import structlog

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.api.bootstrap.services import sync_ports
from factledger.api.settings import load_settings
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncWorker
from factledger.domain.events import ChangeConfirmed, ChangeRejected
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.stalling_backend import Fault, StallingBackend
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import SECRETS, TENANT
from factledger.testing.story.steps import forget

OTHER = "globex"
AT = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)


class CountingBackend(StallingBackend):
    """Counts the writes that carry content (`put_record`, `ingest_transcript`)."""

    def __init__(self, inner: InMemoryMemoryBackend) -> None:
        super().__init__(inner, fault=Fault.NONE)
        self.writes = 0

    async def put_record(self, *args: Any, **kwargs: Any) -> None:
        self.writes += 1
        await super().put_record(*args, **kwargs)

    async def ingest_transcript(self, *args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
        self.writes += 1
        return await super().ingest_transcript(*args, **kwargs)


@dataclass
class Rig:
    clock: ManualClock
    ledger: Ledger
    inner: InMemoryMemoryBackend
    backend: CountingBackend
    store: InMemorySyncStore

    def worker(self, recall: dict[str, object]) -> SyncWorker:
        settings = load_settings(recall=recall)
        feed = LedgerEventFeed(self.ledger)
        ports = sync_ports(settings, self.store, feed, self.backend)
        return SyncWorker(ports, SyncOptions(backoff_s=0.0), worker_id="w1")


@pytest.fixture
def rig() -> Iterator[Rig]:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock)
    inner = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    yield Rig(clock, ledger, inner, CountingBackend(inner), InMemorySyncStore())
    ledger.close()


def other_tenant_session(ledger: Ledger) -> Any:
    subject_id = ledger.register_subject(RegisterSubject(OTHER, "lead", "g-1")).subject_id
    said = (Message(Role.SUBJECT, "We work with Supplier C at the moment.", AT),)
    ledger.record_session(
        RecordSession(OTHER, subject_id, "g-s1", Channel.CHAT, AT, AT, transcript=said)
    )
    return subject_id


async def test_a_tenant_with_memory_off_sends_nothing_while_others_sync(rig: Rig) -> None:
    # Given memory switched off for acme only, and sessions of acme and of globex
    story = run_story(rig.ledger, rig.clock, until="June")
    other = other_tenant_session(rig.ledger)
    with structlog.testing.capture_logs() as logs:
        # When the worker runs
        report = await rig.worker({"tenants": {TENANT: {"enabled": False}}}).run_once()
    # Then acme's items are completed as skipped, globex's written
    assert report.skipped > 0
    assert report.done > 0
    assert report.dead == 0
    assert await rig.store.pending_count() == 0
    assert await rig.inner.list_memories(namespace_for(story.subject_id)) == []
    assert [m.text for m in await rig.inner.list_memories(namespace_for(other))]
    # the ledger still holds acme's sessions
    assert len(rig.ledger.subject(TENANT, story.subject_id).sessions) == 3
    skipped = [e for e in logs if e["event"] == "sync.item_skipped"]
    assert len(skipped) == report.skipped
    assert {e["subject_id"] for e in skipped} == {str(story.subject_id)}
    assert all(secret not in repr(logs) for secret in SECRETS)


def decisions(ledger: Ledger) -> int:
    """How many approvals and rejections the ledger holds: each one's removal item runs."""
    topics = (ChangeConfirmed.TOPIC, ChangeRejected.TOPIC)
    return len(ledger.recorder.select_notifications(start=1, limit=10_000, topics=topics))


async def test_memory_off_for_the_deployment_means_no_backend_writes(rig: Rig) -> None:
    # Given memory switched off deployment-wide
    story = run_story(rig.ledger, rig.clock, until="June")
    other_tenant_session(rig.ledger)
    forget(rig.ledger, rig.clock, story, "supplier")
    # When the worker runs over sessions, proposals, confirmations and a forget
    report = await rig.worker({"enabled": False}).run_once()
    # Then the backend received no write at all, and the queue is drained: only the forget
    # and the decisions' removals ran (they only remove what an enabled period wrote)
    assert rig.backend.writes == 0
    assert report.fed > 0
    removals = 1 + decisions(rig.ledger)
    assert report.done == removals
    assert report.skipped == report.fed - removals
    assert await rig.store.pending_count() == 0
    # while the ledger kept recording
    assert rig.ledger.subject(TENANT, story.subject_id).profile_version >= 3


async def test_a_forget_still_reaches_the_backend_after_memory_is_switched_off(rig: Rig) -> None:
    # Given the story synced while memory was on
    story = run_story(rig.ledger, rig.clock, until="June")
    await rig.worker({}).run_once()
    ns = namespace_for(story.subject_id)
    assert [m for m in await rig.inner.list_memories(ns) if m.slot == "supplier"]
    # When memory is switched off for acme and the supplier is forgotten
    forget(rig.ledger, rig.clock, story, "supplier")
    writes = rig.backend.writes
    report = await rig.worker({"tenants": {TENANT: {"enabled": False}}}).run_once()
    # Then the forget was applied, the new profile version was not sent
    assert report.skipped == 1
    assert report.done == 1
    assert rig.backend.writes == writes
    assert not [m for m in await rig.inner.list_memories(ns) if m.slot == "supplier"]
