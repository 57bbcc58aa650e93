"""Contract of the self-hosted backends: a fact replacing another in its slot is found by what
the slot is for, which was said with the replaced value (ADR 0047), and never by that value.

The Supermemory adapter is exempt: the hosted engine indexes with its own signals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.lexical import LEXICAL_WEIGHT
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, ProcessingStatus, SearchQuery
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-slot-succession")
SLOT = "supplier"
KESTREL_SAID = "We work with Kestrel for our boxes."
VIREO_SAID = "We now work with Vireo Wraps."
# Only a keyword match clears this bar: the test embedder relates no words by meaning.
LIFTED = LEXICAL_WEIGHT / 2


@pytest.fixture
def backend(self_hosted_backend: MemoryBackend) -> MemoryBackend:
    """The self-hosted backends only: this contract is theirs."""
    return self_hosted_backend


def supplier(key: str, text: str, value: str, index: int = 0) -> ExtractedFact:
    fact = stated(key, text, slot=SLOT, updates=True, source_indexes=(index,))
    return replace(fact, value=value)


KESTREL = supplier("f0", "works with Kestrel for their boxes", "Kestrel")
VIREO = supplier("f0", "works with Vireo Wraps", "Vireo Wraps")


async def lifted(backend: MemoryBackend, question: str) -> list[str]:
    return [h.text for h in await backend.search(NS, SearchQuery(question, threshold=LIFTED))]


async def test_the_replacing_fact_is_found_by_what_the_slot_is_for(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", KESTREL_SAID, KESTREL)
    await ingest(NS, "call-2", VIREO_SAID, VIREO)
    await ingest(NS, "call-3", "The weather was lovely.", stated("f0", "Enjoyed the weather"))

    assert await lifted(backend, "boxes") == ["works with Vireo Wraps"]
    assert await lifted(backend, "Kestrel") == []


async def test_a_third_value_inherits_through_the_second(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", KESTREL_SAID, KESTREL)
    await ingest(NS, "call-2", VIREO_SAID, VIREO)
    await ingest(NS, "call-3", "Larkspur it is.", supplier("f0", "works with Larkspur", "Larkspur"))

    assert await lifted(backend, "boxes") == ["works with Larkspur"]
    assert await lifted(backend, "Vireo wraps") == []


async def test_both_facts_in_one_transcript_give_the_same_result(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", f"{KESTREL_SAID} {VIREO_SAID}", KESTREL, replace(VIREO, key="f1"))

    assert await lifted(backend, "boxes") == ["works with Vireo Wraps"]


async def test_a_replayed_session_keeps_the_terms_it_was_written_with(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", KESTREL_SAID, KESTREL)
    await ingest(NS, "call-2", VIREO_SAID, VIREO)
    before = await backend.search(NS, SearchQuery("boxes", threshold=0.0))

    await ingest(NS, "call-1", KESTREL_SAID, KESTREL)
    await ingest(NS, "call-2", VIREO_SAID, VIREO)

    assert await backend.search(NS, SearchQuery("boxes", threshold=0.0)) == before


async def test_forgetting_the_replaced_fact_leaves_its_value_searchable_nowhere(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", KESTREL_SAID, KESTREL)
    await ingest(NS, "call-2", VIREO_SAID, VIREO)
    await ingest(NS, "call-3", "Larkspur it is.", supplier("f0", "works with Larkspur", "Larkspur"))
    (kestrel,) = [
        m.id
        for m in await backend.list_memories(NS, include_superseded=True)
        if "Kestrel" in m.text
    ]

    await backend.forget(NS, [kestrel], reason="subject asked")

    everything = SearchQuery("Kestrel", threshold=LIFTED, include_superseded=True, limit=10)
    assert await backend.search(NS, everything) == []
    # What the slot is for was not the value: the current fact is still found by it.
    assert await lifted(backend, "boxes") == ["works with Larkspur"]
