"""`ValidatingMemoryBackend` checks every port call once, before the adapter sees it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.errors import InvalidMemoryInputError
from factledger.application.memory.forwarding import innermost_backend
from factledger.application.memory.types import Metadata, Namespace, SearchQuery
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

NS = Namespace("subject-1")
AT = datetime(2026, 3, 1, tzinfo=UTC)
NAIVE = datetime(2026, 3, 1)  # the invalid input under test: no time zone
SAID = [Message(Role.SUBJECT, "hello")]


class RecordingBackend(InMemoryMemoryBackend):
    """A real adapter that notes which calls reached it and with what metadata."""

    def __init__(self) -> None:
        super().__init__(
            extractor=ScriptedExtractor(), embedder=HashingEmbedder(64), clock=ManualClock()
        )
        self.reached: list[str] = []
        self.metadata: list[Metadata | None] = []

    async def put_record(
        self,
        namespace: Namespace,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: Metadata | None = None,
        *,
        search_text: str | None = None,
    ) -> None:
        self.reached.append("put_record")
        self.metadata.append(metadata)
        await super().put_record(
            namespace, record_id, kind, body_json, metadata, search_text=search_text
        )

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[Any]:
        self.reached.append("search")
        return await super().search(namespace, query)

    async def forget(self, namespace: Namespace, memory_ids: Any, *, reason: str) -> Any:
        self.reached.append("forget")
        return await super().forget(namespace, memory_ids, reason=reason)

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None:
        self.reached.append("expire")
        await super().expire(namespace, memory_id, at=at)

    async def delete_records(self, namespace: Namespace, record_ids: Any) -> Any:
        self.reached.append("delete_records")
        return await super().delete_records(namespace, record_ids)


Call = Callable[[ValidatingMemoryBackend], Awaitable[object]]
BAD_CALLS: dict[str, Call] = {
    "namespace": lambda b: b.search(Namespace("a/b"), SearchQuery("x")),
    "query": lambda b: b.search(NS, SearchQuery("x", limit=0)),
    "record-id": lambda b: b.put_record(NS, "../x", "note", "{}"),
    "body": lambda b: b.put_record(NS, "r-1", "note", "{not json"),
    "metadata": lambda b: b.put_record(NS, "r-1", "note", "{}", {"bad key": 1}),
    "record-ids": lambda b: b.delete_records(NS, ["ok", "not ok"]),
    "reason": lambda b: b.forget(NS, ["mem_1"], reason="x" * 501),
    "blank-reason": lambda b: b.forget(NS, ["mem_1"], reason="  "),
    "naive-time": lambda b: b.expire(NS, "mem_1", at=NAIVE),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
async def test_a_bad_call_never_reaches_the_adapter(call: Call) -> None:
    inner = RecordingBackend()
    with pytest.raises(InvalidMemoryInputError):
        await call(ValidatingMemoryBackend(inner))
    assert inner.reached == []


async def test_a_good_call_is_delegated_with_the_checked_metadata() -> None:
    inner = RecordingBackend()
    backend = ValidatingMemoryBackend(inner)

    await backend.put_record(NS, "r-1", "note", "{}", {"tags": ["a", "b"]})

    assert inner.reached == ["put_record"]
    assert inner.metadata == [{"tags": ("a", "b")}]
    assert (await backend.get_record(NS, "r-1")).metadata == {"tags": ("a", "b")}


async def test_the_wrapper_shows_the_adapter_name_and_unwraps_to_it() -> None:
    inner = RecordingBackend()
    backend = ValidatingMemoryBackend(ValidatingMemoryBackend(inner))
    assert (backend.name, backend.capabilities) == (inner.name, inner.capabilities)
    assert innermost_backend(backend) is inner
    assert innermost_backend(inner) is inner
