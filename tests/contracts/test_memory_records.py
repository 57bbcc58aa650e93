"""Contract: records are stored verbatim, idempotent by id, never mined, searchable as chunks."""

from __future__ import annotations

import pytest

from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryConflictError,
    MemoryNotFoundError,
)
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    Condition,
    FilterOp,
    HitKind,
    Namespace,
    SearchMode,
    SearchQuery,
)
from factledger.testing.scripted_extractor import ScriptedExtractor

NS = Namespace("subject-records")
# Odd spacing, key order, a trailing zero, escapes and non-ASCII: any re-encoding changes it.
BODY = '{"z": 1.10,  "a": "caf\\u00e9 \u00fc  two  spaces",\n "list": [3, 1, 2], "n": null}'


async def test_a_record_reads_back_byte_for_byte(backend: MemoryBackend) -> None:
    await backend.put_record(NS, "profile-v1", "profile_version", BODY, {"version": 1})

    record = await backend.get_record(NS, "profile-v1")

    assert record.body_json == BODY
    assert record.body_json.encode() == BODY.encode()
    assert record.kind == "profile_version"
    assert record.record_id == "profile-v1"
    assert dict(record.metadata) == {"version": 1}


async def test_writing_the_same_record_twice_is_a_no_op(backend: MemoryBackend) -> None:
    await backend.put_record(NS, "summary-1", "session_summary", '{"text": "renewal call"}')
    await backend.put_record(NS, "summary-1", "session_summary", '{"text": "renewal call"}')

    hits = await backend.search(
        NS, SearchQuery("renewal call", mode=SearchMode.CHUNKS, threshold=0.0, limit=10)
    )

    assert len(hits) == 1
    assert hits[0].document_id == "summary-1"


async def test_another_body_under_the_same_id_is_a_conflict(backend: MemoryBackend) -> None:
    await backend.put_record(NS, "summary-1", "session_summary", '{"text": "first"}')

    with pytest.raises(MemoryConflictError):
        await backend.put_record(NS, "summary-1", "session_summary", '{"text": "second"}')

    assert (await backend.get_record(NS, "summary-1")).body_json == '{"text": "first"}'


async def test_a_missing_record_is_not_found(backend: MemoryBackend) -> None:
    with pytest.raises(MemoryNotFoundError):
        await backend.get_record(NS, "nothing-here")


async def test_a_body_that_is_not_json_is_rejected(backend: MemoryBackend) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.put_record(NS, "bad-1", "session_summary", "{not json")


async def test_records_are_searchable_as_chunks_and_never_become_facts(
    backend: MemoryBackend, extractor: ScriptedExtractor
) -> None:
    await backend.put_record(
        NS, "proposal-7", "proposal", '{"change": "budget raised to 40k for the warehouse"}'
    )

    chunks = await backend.search(
        NS, SearchQuery("warehouse budget", mode=SearchMode.CHUNKS, threshold=0.0, limit=5)
    )
    memories = await backend.search(
        NS, SearchQuery("warehouse budget", mode=SearchMode.MEMORIES, threshold=0.0, limit=5)
    )

    assert [(h.kind, h.document_id) for h in chunks] == [(HitKind.CHUNK, "proposal-7")]
    assert "warehouse" in chunks[0].text
    assert memories == []
    assert await backend.list_memories(NS) == []
    assert extractor.requests == []


async def test_record_metadata_is_filterable_in_chunk_search(backend: MemoryBackend) -> None:
    await backend.put_record(NS, "s-1", "session_summary", '{"t": "delivery call"}', {"week": 1})
    await backend.put_record(NS, "s-2", "session_summary", '{"t": "delivery call"}', {"week": 2})

    hits = await backend.search(
        NS,
        SearchQuery(
            "delivery call",
            mode=SearchMode.CHUNKS,
            threshold=0.0,
            limit=5,
            filters=Condition("week", FilterOp.GTE, 2),
        ),
    )

    assert [h.document_id for h in hits] == ["s-2"]


# A proposal as the sync stores it, and the rendering of its values the sync indexes it by.
PROPOSAL_BODY = (
    '{"change_id":"5f0c2d4e-9b1a-4c3e-8d2f-1a2b3c4d5e6f","field":"supplier",'
    '"proposed_at":"2026-03-03T10:00:00+00:00","value":{"type":"text","value":"Fernhill"}}'
)
PROPOSAL_TEXT = "supplier: Fernhill. We order our cartons from Fernhill."


async def test_a_record_with_a_search_text_is_found_and_reads_back_verbatim(
    backend: MemoryBackend,
) -> None:
    await backend.put_record(
        NS, "proposal-1", "change_proposed", PROPOSAL_BODY, search_text=PROPOSAL_TEXT
    )

    hits = await backend.search(
        NS, SearchQuery("supplier Fernhill", mode=SearchMode.CHUNKS, threshold=0.0, limit=5)
    )

    assert [(h.kind, h.document_id) for h in hits] == [(HitKind.CHUNK, "proposal-1")]
    assert "Fernhill" in hits[0].text
    assert (await backend.get_record(NS, "proposal-1")).body_json == PROPOSAL_BODY


async def test_the_search_text_is_no_part_of_a_records_identity(backend: MemoryBackend) -> None:
    await backend.put_record(
        NS, "proposal-1", "change_proposed", PROPOSAL_BODY, search_text=PROPOSAL_TEXT
    )
    await backend.put_record(NS, "proposal-1", "change_proposed", PROPOSAL_BODY)
    await backend.put_record(
        NS, "proposal-1", "change_proposed", PROPOSAL_BODY, search_text="supplier: Fernhill"
    )

    hits = await backend.search(
        NS, SearchQuery("supplier Fernhill", mode=SearchMode.HYBRID, threshold=0.0, limit=10)
    )

    assert [h.document_id for h in hits] == ["proposal-1"]


@pytest.mark.parametrize("blank", ["", "  \n"])
async def test_a_blank_search_text_is_refused(backend: MemoryBackend, blank: str) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.put_record(NS, "proposal-1", "change_proposed", "{}", search_text=blank)

    with pytest.raises(MemoryNotFoundError):
        await backend.get_record(NS, "proposal-1")
