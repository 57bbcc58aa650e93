"""Contract: what the sync relies on to carry a reviewer's decision to the backend
(`sync.decisions`, ADR 0057) holds on every backend.

- A current fact forgotten for a decision leaves every search recall makes, including the wide
  one that also asks for superseded and inferred facts, and the listing the sync selects from;
  the fact it stood beside stays current.
- A proposal's record is read back byte for byte (the sync reads the decided value from it) and,
  once deleted, no search finds it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    Namespace,
    ProcessingStatus,
    SearchMode,
    SearchQuery,
)
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-decisions")


def wide(text: str, mode: SearchMode = SearchMode.MEMORIES) -> SearchQuery:
    return SearchQuery(
        text=text,
        mode=mode,
        threshold=0.0,
        limit=20,
        include_inferred=True,
        include_superseded=True,
    )


async def test_a_fact_forgotten_for_a_decision_leaves_the_wide_search_and_the_listing(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", "We buy from Tamarind", stated("f0", "Buys from Tamarind"))
    await ingest(NS, "call-2", "Boxes come from Vireo", stated("f0", "Boxes come from Vireo"))
    by_text = {m.text: m.id for m in await backend.list_memories(NS)}

    await backend.forget(
        NS, [by_text["Buys from Tamarind"]], reason="rejected in the ledger at position 7"
    )

    hits = await backend.search(NS, wide("buys boxes from Tamarind Vireo"))
    assert [h.text for h in hits] == ["Boxes come from Vireo"]
    assert [m.text for m in await backend.list_memories(NS, include_superseded=True)] == [
        "Boxes come from Vireo"
    ]
    assert (await backend.get_memory(NS, by_text["Boxes come from Vireo"])).is_latest


async def test_a_proposal_record_reads_back_verbatim_and_once_deleted_is_never_found(
    backend: MemoryBackend,
) -> None:
    body = json.dumps({"field": "supplier", "value": {"type": "text", "value": "Tamarind"}})
    await backend.put_record(
        NS, "proposal.decided", "change_proposed", body, {}, search_text="supplier Tamarind"
    )
    assert (await backend.get_record(NS, "proposal.decided")).body_json == body

    result = await backend.delete_records(NS, ["proposal.decided"])

    assert result.forgotten == ("proposal.decided",)
    for mode in (SearchMode.CHUNKS, SearchMode.HYBRID):
        assert await backend.search(NS, wide("supplier Tamarind", mode)) == []
