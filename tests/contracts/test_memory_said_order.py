"""Contract of the self-hosted backends: which fact of a slot is current is decided by when it
was said (the conversation's time), not by when it arrived. An imported January call ingested
after March's does not make January's value current: it is kept, already superseded, and
March's stays the slot's current fact, as the profile keeps it.

The Supermemory adapter is exempt: the hosted engine links memories (and decides which is
latest) by its own rules, and its memories carry no slot to order by.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, ProcessingStatus, SearchQuery
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-said-order")
JANUARY = datetime(2025, 1, 14, 10, tzinfo=UTC)
MARCH = datetime(2025, 3, 3, 15, tzinfo=UTC)
MAY = datetime(2025, 5, 20, 9, tzinfo=UTC)


@pytest.fixture
def backend(self_hosted_backend: MemoryBackend) -> MemoryBackend:
    """The self-hosted backends only: this contract is theirs."""
    return self_hosted_backend


def supplier(text: str, value: str) -> ExtractedFact:
    return replace(stated("f0", text, slot="supplier", updates=True), value=value)


INITECH = supplier("works with Initech", "Initech")
GLOBEX = supplier("works with Globex", "Globex")
UMBRELLA = supplier("works with Umbrella", "Umbrella")


async def current(backend: MemoryBackend) -> list[str]:
    memories = await backend.list_memories(NS, include_superseded=False)
    return sorted(m.text for m in memories)


async def every(backend: MemoryBackend) -> dict[str, bool]:
    return {m.text: m.is_latest for m in await backend.list_memories(NS)}


async def test_a_value_said_earlier_but_ingested_later_does_not_become_current(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-march", "We moved to Globex.", GLOBEX, occurred_at=MARCH)
    await ingest(NS, "call-january", "We use Initech.", INITECH, occurred_at=JANUARY)

    assert await current(backend) == ["works with Globex"]
    assert await every(backend) == {"works with Globex": True, "works with Initech": False}
    found = await backend.search(NS, SearchQuery("who supplies them", threshold=0.0, limit=5))
    assert [h.text for h in found if h.is_latest] == ["works with Globex"]


async def test_the_same_values_in_said_order_end_the_same(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-january", "We use Initech.", INITECH, occurred_at=JANUARY)
    await ingest(NS, "call-march", "We moved to Globex.", GLOBEX, occurred_at=MARCH)

    assert await current(backend) == ["works with Globex"]
    assert await every(backend) == {"works with Globex": True, "works with Initech": False}


async def test_a_value_said_after_the_current_one_still_replaces_it(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-march", "We moved to Globex.", GLOBEX, occurred_at=MARCH)
    await ingest(NS, "call-january", "We use Initech.", INITECH, occurred_at=JANUARY)
    await ingest(NS, "call-may", "Umbrella now.", UMBRELLA, occurred_at=MAY)

    assert await current(backend) == ["works with Umbrella"]
    umbrella = next(m for m in await backend.list_memories(NS) if m.text == "works with Umbrella")
    globex = next(m for m in await backend.list_memories(NS) if m.text == "works with Globex")
    assert [r.memory_id for r in umbrella.relations] == [globex.id]
