"""Over HTTP, on every backend: recall believes what reviewers decided.

- A rejected proposal's value is never recalled: at once (recall reads the ledger's
  rejections, as it reads its forgets), and once the sync has run neither the memory drawn
  from the sentence that said it nor the proposal's record is in the backend.
- Approving a new supplier takes the old one out of the top three as current, even when the
  new one was said in words the extractor did not link as a replacement; the confirmed
  supplier comes first.
- Before the sync has carried an approval, a question about the field gets the confirmed
  value first, above the unreviewed memory that still says the old one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import bearer, build_ports, token
from support.api_steps import AGENT, a_lead, ok, said, sync

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.clocks import Clock
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import Capability, SearchMode, SearchQuery
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.supermemory.harness import supermemory_backend_in_process

REVIEWER = bearer(token(Role.REVIEWER))
OPENED = datetime(2026, 3, 3, 10, tzinfo=UTC)

Factory = Callable[[pytest.FixtureRequest, Clock], AbstractAsyncContextManager[MemoryBackend]]


@asynccontextmanager
async def in_memory(request: pytest.FixtureRequest, clock: Clock) -> AsyncIterator[None]:
    yield None  # the harness's own in-memory backend


@asynccontextmanager
async def pgvector(request: pytest.FixtureRequest, clock: Clock) -> AsyncIterator[MemoryBackend]:
    async with pgvector_backend(
        request.getfixturevalue("postgres"),
        embedder=HashingEmbedder(),
        extractor=RuleExtractor(),
        clock=clock,
    ) as backend:
        yield backend


@asynccontextmanager
async def supermemory(request: pytest.FixtureRequest, clock: Clock) -> AsyncIterator[MemoryBackend]:
    harness = supermemory_backend_in_process(RuleExtractor(), HashingEmbedder(), clock=clock)
    async with harness as (backend, _server):
        yield backend


@pytest.fixture(
    params=[
        pytest.param(in_memory, id="in-memory"),
        pytest.param(pgvector, id="pgvector", marks=pytest.mark.integration),
        pytest.param(supermemory, id="supermemory-stand-in"),
    ]
)
async def ports(request: pytest.FixtureRequest) -> AsyncIterator[Runtime]:
    clock = ManualClock(OPENED)
    async with request.param(request, clock) as backend:
        yield build_ports(clock, memory=backend)


async def proposed(
    http: httpx.AsyncClient, field: str, value: str, session_id: str, *, based_on: int = 0
) -> str:
    proposal = {
        "based_on_version": based_on,
        "field": field,
        "value": {"type": "text", "value": value},
        "origin": "stated",
        "evidence": {"session_id": session_id, "message_index": 0, "quote": value},
    }
    change = await ok(
        await http.post("/v1/subjects/me/proposals", json=proposal, headers=AGENT), 201
    )
    return str(change["change_id"])


async def decide(http: httpx.AsyncClient, subject_id: UUID, change_id: str, verdict: str) -> None:
    url = f"/v1/subjects/{subject_id}/proposals/{change_id}/{verdict}"
    body = {"reason": "the subject never said so"} if verdict == "reject" else {}
    await ok(await http.post(url, json=body, headers=REVIEWER))


async def recalled(http: httpx.AsyncClient, query: str) -> list[dict[str, Any]]:
    # The hashing embedder scores by shared words, below the semantic default threshold.
    answer = await ok(
        await http.post("/v1/subjects/me/recall", json={"query": query}, headers=AGENT)
    )
    assert answer["degraded"] is None
    notes: list[dict[str, Any]] = answer["notes"]
    return notes


Searched = Callable[[str], Awaitable[list[str]]]


def backend_texts(ports: Runtime, subject_id: UUID) -> Searched:
    async def search(text: str) -> list[str]:
        assert ports.backend is not None
        query = SearchQuery(text, mode=SearchMode.HYBRID, threshold=0.0, limit=50)
        return [h.text for h in await ports.backend.search(namespace_for(subject_id), query)]

    return search


async def test_a_rejected_proposal_is_never_recalled(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given the subject named a supplier, synced, and proposed as a field
    subject_id = UUID(await a_lead(http))
    await said(http, "We work with Supplier Tamarind now.", "wa-1")
    change_id = await proposed(http, "supplier", "Supplier Tamarind", "wa-1")
    await sync(ports)
    search = backend_texts(ports, subject_id)
    assert any("Tamarind" in t for t in await search("Supplier Tamarind"))

    # When a reviewer rejects it: recall drops it at once, before the sync has run
    await decide(http, subject_id, change_id, "reject")
    assert any("Tamarind" in t for t in await search("Supplier Tamarind"))  # still in the backend
    assert not any("Tamarind" in n["text"] for n in await recalled(http, "Supplier Tamarind"))
    # and once the sync runs
    await sync(ports)

    # Then neither recall nor the backend's memories and chunks hold the rejected value
    assert not any("Tamarind" in n["text"] for n in await recalled(http, "Supplier Tamarind"))
    assert not any("Tamarind" in t for t in await search("Supplier Tamarind"))
    # and a replay of the sync changes nothing
    await sync(ports)
    assert not any("Tamarind" in t for t in await search("Supplier Tamarind"))


async def test_a_rejected_line_reworded_by_the_extractor_leaves_recall_and_the_backend(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given the proposal's value is the subject's words, which the extractor remembered
    # reworded ("works with Supplier Tamarind"): the memory does not state the value's words
    subject_id = UUID(await a_lead(http))
    line = "We work with Supplier Tamarind now."
    await said(http, line, "wa-1")
    change_id = await proposed(http, "supplier", line, "wa-1")
    await sync(ports)
    assert any("Tamarind" in n["text"] for n in await recalled(http, "Supplier Tamarind"))
    search = backend_texts(ports, subject_id)

    # When a reviewer rejects it: recall drops it at once, and after the sync too
    await decide(http, subject_id, change_id, "reject")
    assert not any("Tamarind" in n["text"] for n in await recalled(http, "Supplier Tamarind"))
    await sync(ports)
    assert not any("Tamarind" in n["text"] for n in await recalled(http, "Supplier Tamarind"))

    # Then a backend that fills slots no longer holds it: the memory of the field made from the
    # evidence line went (ADR 0164); one without slots keeps it, and recall withholds it
    assert ports.backend is not None
    slots = Capability.FACT_SLOTS in ports.backend.capabilities
    held = [t for t in await search("Supplier Tamarind") if "works with Supplier Tamarind" in t]
    assert bool(held) is not slots, held


async def test_an_approved_supplier_takes_the_old_one_out_of_recall(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given Tamarind was the confirmed supplier
    subject_id = UUID(await a_lead(http))
    await said(http, "We work with Supplier Tamarind now.", "wa-1")
    await decide(
        http, subject_id, await proposed(http, "supplier", "Supplier Tamarind", "wa-1"), "approve"
    )
    # and a later session says Vireo Wraps in words the extractor does not read as a switch
    await said(http, "Our packaging is sourced from Vireo Wraps these days.", "wa-2")
    await sync(ports)
    before = await recalled(http, "which supplier packaging Tamarind Vireo Wraps")
    assert any("Tamarind" in n["text"] for n in before)

    # When a reviewer approves Vireo Wraps and the sync runs
    await decide(
        http,
        subject_id,
        await proposed(http, "supplier", "Vireo Wraps", "wa-2", based_on=1),
        "approve",
    )
    await sync(ports)

    # Then the confirmed supplier comes first (a memory that says it, or the profile's note)
    # and the old one is not current in the top three
    notes = await recalled(http, "which supplier packaging Tamarind Vireo Wraps")
    assert "Vireo Wraps" in notes[0]["text"]
    for note in notes[:3]:
        assert "Tamarind" not in note["text"] or "previously" in note["text"], notes


async def test_a_confirmed_field_ranks_above_an_unreviewed_memory_before_the_sync_runs(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given the subject said Tamarind, synced; then said Vireo Wraps and a reviewer approved
    # it, while the sync has not run (no memory says Vireo Wraps yet)
    subject_id = UUID(await a_lead(http))
    await said(http, "We work with Supplier Tamarind now.", "wa-1")
    await sync(ports)
    assert any("Tamarind" in n["text"] for n in await recalled(http, "supplier Tamarind"))
    await said(http, "Our packaging is sourced from Vireo Wraps these days.", "wa-2")
    change_id = await proposed(http, "supplier", "Vireo Wraps", "wa-2")
    await decide(http, subject_id, change_id, "approve")

    # When the agent asks about the supplier
    notes = await recalled(http, "supplier Tamarind")

    # Then the confirmed value comes first, the unreviewed memory after it
    assert notes[0]["kind"] == "profile"
    assert "Vireo Wraps" in notes[0]["text"]


async def test_a_rejected_value_said_again_later_is_recalled_again(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given a rejected supplier, synced
    subject_id = UUID(await a_lead(http))
    await said(http, "We work with Supplier Tamarind now.", "wa-1")
    change_id = await proposed(http, "supplier", "Supplier Tamarind", "wa-1")
    await decide(http, subject_id, change_id, "reject")
    await sync(ports)
    # When the subject says it again in a later session
    await said(http, "We work with Supplier Tamarind now, really.", "wa-2")
    await sync(ports)
    # Then the new statement is recalled: the rejection was about what was said before it
    assert any("Tamarind" in n["text"] for n in await recalled(http, "Supplier Tamarind"))
