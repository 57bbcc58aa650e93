"""The sync indexes its records by their values: a chunk search finds proposals and profile
versions by what they say, while `get_record` still reads the canonical JSON back."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import HitKind, SearchMode, SearchQuery
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ledger(clock: ManualClock) -> Iterator[Ledger]:
    ledger = Ledger(popo_env(), clock=clock)
    yield ledger
    ledger.close()


async def test_record_chunks_hold_values_and_bodies_stay_canonical_json(
    ledger: Ledger, clock: ManualClock
) -> None:
    backend = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    story = run_story(ledger, clock, until="June")
    feed = LedgerEventFeed(ledger)
    await SyncWorker(SyncPorts(InMemorySyncStore(), feed, feed, backend)).run_once()
    ns = namespace_for(story.subject_id)

    query = SearchQuery("Supplier B", mode=SearchMode.CHUNKS, threshold=0.0, limit=50)
    hits = [h for h in await backend.search(ns, query) if h.kind is HitKind.CHUNK]

    kinds = {(await backend.get_record(ns, str(h.document_id))).kind for h in hits}
    assert {"change_proposed", "profile_version"} <= kinds
    assert any(h.text.startswith("supplier: Supplier B") for h in hits)
    for hit in hits:
        record = await backend.get_record(ns, str(hit.document_id))
        body = json.loads(record.body_json)
        assert "{" not in hit.text
        for unsearched in (body.get("change_id"), body.get("proposed_at")):
            assert unsearched is None or str(unsearched) not in hit.text
