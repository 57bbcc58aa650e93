"""Contract: soft forget, expiry and dropping a whole namespace."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

import pytest

from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, ProcessingStatus, SearchQuery
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-forget")
OTHER = Namespace("subject-other")


def query(text: str, **kwargs: object) -> SearchQuery:
    return SearchQuery(text=text, threshold=0.0, limit=10, **kwargs)  # type: ignore[arg-type]


async def one_fact(backend: MemoryBackend, ingest: Ingest, ns: Namespace = NS) -> str:
    await ingest(ns, "call-1", "My daughter is called Ana", stated("f0", "Daughter is Ana"))
    (memory,) = await backend.list_memories(ns)
    return memory.id


async def test_a_forgotten_fact_is_hidden_but_kept_with_its_reason(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    memory_id = await one_fact(backend, ingest)

    result = await backend.forget(NS, [memory_id], reason="subject asked")
    default = await backend.search(NS, query("daughter Ana"))
    included = await backend.search(NS, query("daughter Ana", include_forgotten=True))
    memory = await backend.get_memory(NS, memory_id)

    assert result.forgotten == (memory_id,)
    assert result.missing == ()
    assert default == []
    assert [(h.id, h.is_forgotten) for h in included] == [(memory_id, True)]
    assert memory.is_forgotten
    assert memory.forget_reason == "subject asked"
    assert await backend.list_memories(NS) == []
    assert [m.id for m in await backend.list_memories(NS, include_forgotten=True)] == [memory_id]


async def test_forgetting_unknown_ids_reports_them_missing(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    memory_id = await one_fact(backend, ingest)

    result = await backend.forget(NS, [memory_id, "mem_unknown"], reason="cleanup")

    assert result.forgotten == (memory_id,)
    assert result.missing == ("mem_unknown",)


async def test_an_expired_fact_is_hidden_from_that_time_on(
    backend: MemoryBackend, ingest: Ingest, clock: ManualClock
) -> None:
    memory_id = await one_fact(backend, ingest)

    await backend.expire(NS, memory_id, at=clock.now() + timedelta(days=1))
    before = await backend.search(NS, query("daughter Ana"))
    clock.advance(timedelta(days=1, seconds=1))
    after = await backend.search(NS, query("daughter Ana"))
    included = await backend.search(NS, query("daughter Ana", include_forgotten=True))

    assert [h.id for h in before] == [memory_id]
    assert after == []
    assert [h.id for h in included] == [memory_id]
    assert await backend.list_memories(NS) == []
    assert (await backend.get_memory(NS, memory_id)).expires_at is not None


async def test_expiring_an_unknown_memory_is_not_found(
    backend: MemoryBackend, clock: ManualClock
) -> None:
    with pytest.raises(MemoryNotFoundError):
        await backend.expire(NS, "mem_unknown", at=clock.now())


async def test_dropping_a_namespace_erases_it_and_only_it(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await one_fact(backend, ingest)
    other_id = await one_fact(backend, ingest, OTHER)
    await backend.put_record(NS, "summary-1", "session_summary", '{"t": "daughter Ana"}')

    await backend.drop_namespace(NS)

    assert await backend.search(NS, query("daughter Ana", include_forgotten=True)) == []
    assert await backend.list_memories(NS, include_forgotten=True) == []
    with pytest.raises(MemoryNotFoundError):
        await backend.get_record(NS, "summary-1")
    with pytest.raises(MemoryNotFoundError):
        await backend.processing_status(NS, "call-1")
    assert [h.id for h in await backend.search(OTHER, query("daughter Ana"))] == [other_id]


async def test_a_dropped_namespace_can_be_used_again(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await one_fact(backend, ingest)
    await backend.drop_namespace(NS)
    await backend.drop_namespace(NS)

    memory_id = await one_fact(backend, ingest)

    assert [m.id for m in await backend.list_memories(NS)] == [memory_id]
