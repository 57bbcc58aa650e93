"""Contract: records are stored verbatim, idempotent by id, never mined, searchable as chunks."""

from __future__ import annotations

import pytest

from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryConflictError,
    MemoryNotFoundError,
)
from factledger.application.memory.types import (
    Condition,
    FilterOp,
    HitKind,
    Namespace,
    SearchMode,
    SearchQuery,
)
from factledger.application.ports import MemoryBackend
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
