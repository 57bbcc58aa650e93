"""Smoke test against the real Supermemory API (about two minutes). Never runs in CI.

Runs only when `SUPERMEMORY_API_KEY` is set (`SUPERMEMORY_BASE_URL` optionally points it
elsewhere): a fictional person, three sessions, wait for extraction, search, a record round
trip, forget, and the namespace dropped at the end whatever happens.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
from factledger.adapters.supermemory.calls import CallPolicy
from factledger.application.memory.types import (
    HitKind,
    IngestMode,
    Namespace,
    ProcessingState,
    SearchMode,
    SearchQuery,
)
from factledger.domain.transcript import Message, Role

API_KEY = os.environ.get("SUPERMEMORY_API_KEY", "")
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not API_KEY, reason="SUPERMEMORY_API_KEY is not set; this test calls the real API"
    ),
]

START = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
SESSIONS = [
    [
        Message(Role.AGENT, "Welcome back! How can I help today?"),
        Message(Role.SUBJECT, "Hi, I'm Marta Quell. I'm a ceramicist and I live in Lisbon."),
    ],
    [
        Message(Role.AGENT, "Has anything changed since we last spoke?"),
        Message(Role.SUBJECT, "Yes, I moved from Lisbon to Porto last month for a bigger studio."),
    ],
    [
        Message(Role.SUBJECT, "My daughter Ines starts primary school in September."),
        Message(Role.AGENT, "Thanks, I have noted that."),
    ],
]


async def wait_done(backend: SupermemoryMemoryBackend, ns: Namespace, document_id: str) -> None:
    settled = (ProcessingState.DONE, ProcessingState.FAILED)
    async with asyncio.timeout(150):  # the SDK's own live test waits up to 90 s
        status = await backend.processing_status(ns, document_id)
        while status.state not in settled:
            await asyncio.sleep(3)
            status = await backend.processing_status(ns, document_id)
    assert status.state is ProcessingState.DONE


async def test_a_fictional_person_round_trips_through_the_live_api() -> None:
    ns = Namespace(f"factledger-smoke-{uuid.uuid4().hex[:12]}")
    backend = SupermemoryMemoryBackend(
        api_key=API_KEY,
        base_url=os.environ.get("SUPERMEMORY_BASE_URL", "https://api.supermemory.ai"),
        policy=CallPolicy(timeout_s=30.0, attempt_timeout_s=20.0),
        ingest_timeout_s=120.0,
    )
    try:
        for index, transcript in enumerate(SESSIONS):
            document_id = f"session-{index}"
            await backend.ingest_transcript(
                ns,
                document_id,
                transcript,
                occurred_at=START + timedelta(days=30 * index),
                mode=IngestMode.INSTANT,
            )
            await wait_done(backend, ns, document_id)
        await backend.put_record(ns, "profile-1", "profile", '{"name": "Marta Quell"}')

        hits = await backend.search(
            ns, SearchQuery("Where does Marta live now?", threshold=0.3, limit=5)
        )
        record = await backend.get_record(ns, "profile-1")
        chunks = await backend.search(
            ns, SearchQuery("Marta Quell profile", mode=SearchMode.CHUNKS, threshold=0.0)
        )

        assert hits, "no memory came back for the subject's city"
        assert all(h.kind is HitKind.MEMORY and h.is_latest for h in hits)
        assert any("Porto" in h.text for h in hits)
        assert record.body_json == '{"name": "Marta Quell"}'
        assert any(h.document_id == "profile-1" for h in chunks)

        result = await backend.forget(ns, [hits[0].id], reason="smoke test")
        after = await backend.search(
            ns, SearchQuery("Where does Marta live now?", threshold=0.3, limit=5)
        )
        forgotten = await backend.get_memory(ns, hits[0].id)

        assert result.forgotten == (hits[0].id,)
        assert hits[0].id not in [h.id for h in after]
        assert forgotten.is_forgotten
        assert forgotten.forget_reason == "smoke test"
    finally:
        await backend.drop_namespace(ns)
        await backend.close()
