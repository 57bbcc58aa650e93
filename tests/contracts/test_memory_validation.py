"""Contract: malformed requests fail with `InvalidMemoryInputError` before touching data."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import pytest

from factledger.application.errors import InvalidMemoryInputError
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock

NS = Namespace("subject-valid")
BAD_NAMESPACES = ["", "has space", "a/b", "x" * 101, "semi;colon", "caf\u00e9"]
Call = Callable[[MemoryBackend, Namespace, ManualClock], Awaitable[Any]]
TRANSCRIPT = [Message(Role.SUBJECT, "hello")]

CALLS: dict[str, Call] = {
    "search": lambda b, ns, c: b.search(ns, SearchQuery("coffee")),
    "ingest": lambda b, ns, c: b.ingest_transcript(ns, "d-1", TRANSCRIPT, occurred_at=c.now()),
    "status": lambda b, ns, c: b.processing_status(ns, "d-1"),
    "put_record": lambda b, ns, c: b.put_record(ns, "r-1", "summary", "{}"),
    "get_record": lambda b, ns, c: b.get_record(ns, "r-1"),
    "list": lambda b, ns, c: b.list_memories(ns),
    "get_memory": lambda b, ns, c: b.get_memory(ns, "mem_1"),
    "forget": lambda b, ns, c: b.forget(ns, ["mem_1"], reason="test"),
    "expire": lambda b, ns, c: b.expire(ns, "mem_1", at=c.now()),
    "drop": lambda b, ns, c: b.drop_namespace(ns),
}


@pytest.mark.parametrize("bad", BAD_NAMESPACES)
@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
async def test_an_invalid_namespace_is_rejected_everywhere(
    backend: MemoryBackend, clock: ManualClock, call: Call, bad: str
) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await call(backend, Namespace(bad), clock)


@pytest.mark.parametrize(
    "query",
    [
        SearchQuery(""),
        SearchQuery("   \n"),
        SearchQuery("coffee", limit=0),
        SearchQuery("coffee", limit=101),
        SearchQuery("coffee", limit=-1),
        SearchQuery("coffee", threshold=-0.1),
        SearchQuery("coffee", threshold=1.5),
        SearchQuery("coffee", threshold=float("nan")),
    ],
    ids=["empty", "blank", "limit-0", "limit-101", "limit-neg", "thr-neg", "thr-big", "thr-nan"],
)
async def test_a_bad_query_is_rejected(backend: MemoryBackend, query: SearchQuery) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.search(NS, query)


async def test_a_naive_date_is_rejected(backend: MemoryBackend) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.ingest_transcript(NS, "d-1", TRANSCRIPT, occurred_at=datetime(2025, 1, 1))


async def test_an_empty_transcript_is_rejected(backend: MemoryBackend, clock: ManualClock) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.ingest_transcript(NS, "d-1", [], occurred_at=clock.now())


@pytest.mark.parametrize("record_id", ["", "has space", "x" * 101])
async def test_a_bad_record_id_is_rejected(backend: MemoryBackend, record_id: str) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.put_record(NS, record_id, "summary", "{}")


async def test_bad_metadata_is_rejected(backend: MemoryBackend) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.put_record(NS, "r-1", "summary", "{}", {"bad key!": "x"})


@pytest.mark.parametrize(("limit", "offset"), [(0, 0), (101, 0), (10, -1)])
async def test_list_memories_rejects_a_bad_page(
    backend: MemoryBackend, limit: int, offset: int
) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.list_memories(NS, limit=limit, offset=offset)


async def test_a_blank_forget_reason_is_rejected(backend: MemoryBackend) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.forget(NS, ["mem_1"], reason="  ")


async def test_health_reports_the_backend(backend: MemoryBackend) -> None:
    health = await backend.health()

    assert health.ok
    assert health.backend == backend.name


UNSAFE_CALLS: dict[str, Call] = {
    "ingest": lambda b, ns, c: b.ingest_transcript(
        ns, "d-1", [Message(Role.SUBJECT, "hi\x00there")], occurred_at=c.now()
    ),
    "search": lambda b, ns, c: b.search(ns, SearchQuery("coffee\udfff")),
    "record-body": lambda b, ns, c: b.put_record(ns, "r-1", "summary", '{"t": "a\\u0000"}'),
    "record-metadata": lambda b, ns, c: b.put_record(ns, "r-1", "summary", "{}", {"k": "\x00"}),
    "forget-reason": lambda b, ns, c: b.forget(ns, ["mem_1"], reason="asked\x00"),
}


@pytest.mark.parametrize("call", UNSAFE_CALLS.values(), ids=UNSAFE_CALLS.keys())
async def test_text_no_engine_can_store_is_refused_as_input(
    backend: MemoryBackend, clock: ManualClock, call: Call
) -> None:
    """NUL (PostgreSQL refuses it) and lone surrogates (UTF-8 cannot encode them) are the
    caller's error, never a driver failure that a retry would repeat."""
    with pytest.raises(InvalidMemoryInputError):
        await call(backend, NS, clock)
