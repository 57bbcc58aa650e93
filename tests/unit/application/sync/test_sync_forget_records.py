"""Forgetting a field reaches the verbatim records: the sync deletes every profile version and
proposal record that carried it, so no chunk or hybrid search finds the value again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.errors import MemoryNotFoundError
from factledger.application.ledger.commands import ForgetMemory
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for, proposal_record_id
from factledger.application.memory.types import HitKind, SearchMode, SearchQuery
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import TENANT
from factledger.testing.story.steps import StoryIds, forget


@dataclass
class Rig:
    clock: ManualClock
    ledger: Ledger
    backend: InMemoryMemoryBackend
    store: InMemorySyncStore

    async def sync(self) -> None:
        feed = LedgerEventFeed(self.ledger)
        report = await SyncWorker(SyncPorts(self.store, feed, feed, self.backend)).run_once()
        assert report.dead == 0

    def change_ids(self, story: StoryIds, field: str) -> list[str]:
        subject = self.ledger.subject(TENANT, story.subject_id)
        return [
            proposal_record_id(c.change_id) for c in subject.changes.values() if c.field == field
        ]

    async def chunk_texts(self, story: StoryIds, text: str, *, memories: bool = False) -> list[str]:
        """Texts of the chunk hits of chunk and hybrid searches (and of memory hits if asked)."""
        ns = namespace_for(story.subject_id)
        texts = []
        for mode in (SearchMode.CHUNKS, SearchMode.HYBRID):
            query = SearchQuery(text, mode=mode, threshold=0.0, limit=50)
            hits = await self.backend.search(ns, query)
            texts += [h.text for h in hits if memories or h.kind is HitKind.CHUNK]
        return texts

    async def record_ids(self, story: StoryIds, candidates: list[str]) -> list[str]:
        ns = namespace_for(story.subject_id)
        present = []
        for record_id in candidates:
            try:
                await self.backend.get_record(ns, record_id)
            except MemoryNotFoundError:
                continue
            present.append(record_id)
        return present


@pytest.fixture
def rig() -> Iterator[Rig]:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock)
    backend = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    yield Rig(clock, ledger, backend, InMemorySyncStore())
    ledger.close()


PROFILES = [f"profile.v{n}" for n in range(1, 7)]
SUPPLIER_VERSIONS = ["profile.v1", "profile.v2", "profile.v3", "profile.v4"]


def no_forgotten_supplier(texts: list[str]) -> bool:
    """Supplier B was only ever the supplier field's value; Supplier A is also named by the
    reason ("delivery delays at Supplier A"), another field, whose records stay."""
    return all(
        "Supplier B" not in t and ("Supplier" not in t or "switch_reason" in t) for t in texts
    )


async def test_forgetting_a_field_deletes_the_records_that_carried_it(rig: Rig) -> None:
    # Given the story up to June synced: four profile versions and two proposals carry a supplier
    story = run_story(rig.ledger, rig.clock, until="June")
    await rig.sync()
    suppliers, intents = rig.change_ids(story, "supplier"), rig.change_ids(story, "purchase_intent")
    assert len(suppliers) == 2
    assert await rig.record_ids(story, PROFILES) == SUPPLIER_VERSIONS
    assert any("Supplier B" in t for t in await rig.chunk_texts(story, "Supplier B"))

    # When the supplier is forgotten and the sync runs
    forget(rig.ledger, rig.clock, story, "supplier")
    await rig.sync()

    # Then every record that held it is gone; the new version and other proposals stay
    assert await rig.record_ids(story, PROFILES) == ["profile.v5"]
    assert await rig.record_ids(story, suppliers) == []
    assert await rig.record_ids(story, intents) == intents
    for text in ("Supplier A", "Supplier B", "supplier"):
        assert no_forgotten_supplier(await rig.chunk_texts(story, text))
    # the field's memories are forgotten too, with the one drawn from the words that evidenced
    # it ("moved to Supplier B last month" has another slot)
    hybrid = await rig.chunk_texts(story, "Supplier B", memories=True)
    assert all("Supplier B" not in t for t in hybrid)
    # and what remains still answers for the other field
    assert any("next quarter" in t for t in await rig.chunk_texts(story, "next quarter"))


async def test_a_replay_after_forgetting_deletes_the_records_again(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    await rig.sync()
    forget(rig.ledger, rig.clock, story, "supplier")
    await rig.sync()

    # A fresh queue replays the whole log: old versions are written again, then deleted again
    rig.store = InMemorySyncStore()
    await rig.sync()

    assert await rig.record_ids(story, PROFILES) == ["profile.v5"]
    assert await rig.record_ids(story, rig.change_ids(story, "supplier")) == []
    assert no_forgotten_supplier(await rig.chunk_texts(story, "Supplier B"))


async def test_forgetting_one_memory_deletes_no_record(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    await rig.sync()
    ns = namespace_for(story.subject_id)
    memory = (await rig.backend.list_memories(ns))[0]

    rig.ledger.forget_memory(
        ForgetMemory(TENANT, story.subject_id, memory.id, Actor(ActorKind.STAFF, "rev-7"), "asked")
    )
    await rig.sync()

    assert (await rig.backend.get_memory(ns, memory.id)).is_forgotten
    assert await rig.record_ids(story, PROFILES) == SUPPLIER_VERSIONS
