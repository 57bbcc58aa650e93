"""Contract: one namespace's data is never returned, changed or erased through another."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    Condition,
    FilterOp,
    Namespace,
    ProcessingStatus,
    SearchMode,
    SearchQuery,
)
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
A = Namespace("tenant-1:subject-a")
B = Namespace("tenant-1:subject-b")
TEXT = "My favourite coffee is a flat white with oat milk"


def query(text: str, **kwargs: object) -> SearchQuery:
    return SearchQuery(text=text, threshold=0.0, limit=10, **kwargs)  # type: ignore[arg-type]


async def test_identical_texts_in_two_namespaces_stay_apart(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(A, "doc-1", TEXT, stated("f0", TEXT, slot="coffee"), metadata={"side": "a"})
    await ingest(B, "doc-1", TEXT, stated("f0", TEXT, slot="coffee"), metadata={"side": "b"})

    ids_a = {m.id for m in await backend.list_memories(A)}
    ids_b = {m.id for m in await backend.list_memories(B)}
    hits_a = await backend.search(A, query("flat white coffee"))

    assert len(ids_a) == 1
    assert len(ids_b) == 1
    assert hits_a
    assert {h.id for h in hits_a} <= ids_a
    assert all(h.metadata.get("side") == "a" for h in hits_a)


async def test_a_memory_of_one_namespace_is_not_found_through_another(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(A, "doc-1", TEXT, stated("f0", TEXT))
    (memory,) = await backend.list_memories(A)

    with pytest.raises(MemoryNotFoundError):
        await backend.get_memory(B, memory.id)
    result = await backend.forget(B, [memory.id], reason="wrong namespace")

    assert result.forgotten == ()
    assert result.missing == (memory.id,)
    assert not (await backend.get_memory(A, memory.id)).is_forgotten


async def test_filters_never_reach_into_another_namespace(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(A, "doc-1", TEXT, stated("f0", TEXT), metadata={"channel": "chat"})
    await ingest(B, "doc-2", TEXT, stated("f0", TEXT), metadata={"channel": "voice"})

    hits = await backend.search(
        A, query("coffee", filters=Condition("channel", FilterOp.EQ, "voice"))
    )

    assert hits == []


async def test_records_with_the_same_id_in_two_namespaces_are_independent(
    backend: MemoryBackend,
) -> None:
    await backend.put_record(A, "summary-1", "session_summary", '{"owner": "a"}')
    await backend.put_record(B, "summary-1", "session_summary", '{"owner": "b"}')

    assert (await backend.get_record(A, "summary-1")).body_json == '{"owner": "a"}'
    assert (await backend.get_record(B, "summary-1")).body_json == '{"owner": "b"}'
    chunks = await backend.search(A, query("owner", mode=SearchMode.CHUNKS))
    assert [c.text for c in chunks] == ['{"owner": "a"}']


async def test_an_empty_namespace_returns_nothing(backend: MemoryBackend, ingest: Ingest) -> None:
    await ingest(A, "doc-1", TEXT, stated("f0", TEXT))

    assert await backend.search(B, query(TEXT)) == []
    assert await backend.list_memories(B) == []
