"""Over HTTP: once `forget` answers, recall and context no longer serve the fact though the
sync has not run; and by default they carry notes only, no verbatim excerpts."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import httpx
import pytest
from support.api_harness import bearer, token
from support.api_steps import AGENT, a_lead, ok, said, sync

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import SearchQuery
from factledger.testing.manual_clock import ManualClock

SAID = "We work with Supplier Tamarind now."
QUERY = {"query": "Supplier Tamarind"}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))


async def a_synced_memory(http: httpx.AsyncClient, ports: Runtime) -> tuple[UUID, str]:
    """A subject who said which supplier they use, synced once; (subject id, memory id)."""
    subject_id = UUID(await a_lead(http))
    await said(http, SAID)
    await sync(ports)
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(subject_id))
    (memory,) = [m for m in memories if "Tamarind" in m.text]
    return subject_id, memory.id


async def test_recall_and_context_carry_notes_and_no_excerpts_by_default(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    await a_synced_memory(http, ports)
    recall = await ok(await http.post("/v1/subjects/me/recall", json=QUERY, headers=AGENT))
    topic = {"topic": "Supplier Tamarind"}
    context = await ok(await http.post("/v1/subjects/me/context", json=topic, headers=AGENT))
    assert [n["kind"] for n in recall["notes"]] == ["memory"]
    assert "Tamarind" in recall["notes"][0]["text"]
    assert (recall["excerpts"], context["excerpts"]) == ([], [])
    for answer in (recall, context):
        assert SAID not in str(answer)
        assert "Verbatim" not in answer["prompt"]


async def test_a_memory_forgotten_over_http_leaves_recall_before_the_sync_runs(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    subject_id, memory_id = await a_synced_memory(http, ports)
    assert "Tamarind" in str(
        await ok(await http.post("/v1/subjects/me/recall", json=QUERY, headers=AGENT))
    )

    forget = {"memory_id": memory_id, "reason": "the subject asked"}
    await ok(await http.post("/v1/subjects/me/forget", json=forget, headers=AGENT))

    assert ports.backend is not None  # the sync did not run: the backend still has it
    hits = await ports.backend.search(namespace_for(subject_id), SearchQuery("Supplier Tamarind"))
    assert [h.id for h in hits] == [memory_id]
    recall = await ok(await http.post("/v1/subjects/me/recall", json=QUERY, headers=AGENT))
    topic = {"topic": "Supplier Tamarind"}
    context = await ok(await http.post("/v1/subjects/me/context", json=topic, headers=AGENT))
    assert recall["notes"] == []
    assert recall["degraded"] is None
    assert "Tamarind" not in str(context["memories"])
    assert "Tamarind" not in recall["prompt"] + context["prompt"]


REVIEWER = bearer(token(Role.REVIEWER))


async def test_a_field_forgotten_over_http_takes_its_memories_out_of_recall_at_once(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given the supplier said, synced, then confirmed as a field
    subject_id, memory_id = await a_synced_memory(http, ports)
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier Tamarind"},
        "origin": "stated",
        "evidence": {"session_id": "wa-1", "message_index": 0, "quote": "Supplier Tamarind"},
    }
    change = await ok(
        await http.post("/v1/subjects/me/proposals", json=proposal, headers=AGENT), 201
    )
    url = f"/v1/subjects/{subject_id}/proposals/{change['change_id']}/approve"
    await ok(await http.post(url, json={}, headers=REVIEWER))
    before = await ok(await http.post("/v1/subjects/me/recall", json=QUERY, headers=AGENT))
    assert [n["ref"] for n in before["notes"]] == [memory_id]

    # When the field is forgotten and the sync does not run
    forget = {"field": "supplier", "reason": "the subject asked"}
    await ok(await http.post("/v1/subjects/me/forget", json=forget, headers=AGENT))

    # Then neither recall nor context serves the memory drawn from its words
    recall = await ok(await http.post("/v1/subjects/me/recall", json=QUERY, headers=AGENT))
    topic = {"topic": "Supplier Tamarind"}
    context = await ok(await http.post("/v1/subjects/me/context", json=topic, headers=AGENT))
    assert recall["notes"] == []
    assert "Tamarind" not in str(context["memories"]) + str(context["profile"])
