"""Contract of the self-hosted backends: a record's search text is what its chunks hold.

The sync indexes its records by a rendering of their values (ADR 0042); the body, with its
ids and timestamps, is only read back by id. The Supermemory adapter is exempt: the hosted
engine chunks and embeds the document it stores, which must be the body verbatim.
"""

from __future__ import annotations

import pytest

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import HitKind, Namespace, SearchMode, SearchQuery

NS = Namespace("subject-search-text")
CHANGE_ID = "5f0c2d4e-9b1a-4c3e-8d2f-1a2b3c4d5e6f"
BODY = (
    f'{{"change_id":"{CHANGE_ID}","field":"supplier",'
    '"proposed_at":"2026-03-03T10:00:00+00:00","value":{"type":"text","value":"Fernhill"}}'
)
SEARCH_TEXT = "supplier: Fernhill. We order our cartons from Fernhill."


@pytest.fixture
def backend(self_hosted_backend: MemoryBackend) -> MemoryBackend:
    """The self-hosted backends only: this contract is theirs."""
    return self_hosted_backend


@pytest.mark.parametrize("mode", [SearchMode.CHUNKS, SearchMode.HYBRID])
async def test_a_chunk_holds_the_search_text_not_the_body(
    backend: MemoryBackend, mode: SearchMode
) -> None:
    await backend.put_record(NS, "proposal-1", "change_proposed", BODY, search_text=SEARCH_TEXT)

    found = await backend.search(NS, SearchQuery("cartons", mode=mode, threshold=0.0, limit=5))
    by_id = await backend.search(NS, SearchQuery(CHANGE_ID, mode=mode, threshold=0.5, limit=5))

    assert [(h.kind, h.document_id, h.text) for h in found] == [
        (HitKind.CHUNK, "proposal-1", SEARCH_TEXT)
    ]
    assert by_id == []  # the id is in the body only: neither its vector nor its words index it


async def test_a_record_indexed_by_its_body_keeps_that_index_when_written_again(
    backend: MemoryBackend,
) -> None:
    # Written before the sync rendered its records, then replayed by a sync that does.
    await backend.put_record(NS, "proposal-1", "change_proposed", BODY)
    await backend.put_record(NS, "proposal-1", "change_proposed", BODY, search_text=SEARCH_TEXT)

    hits = await backend.search(
        NS, SearchQuery("supplier Fernhill", mode=SearchMode.HYBRID, threshold=0.0, limit=5)
    )

    assert [(h.document_id, h.text) for h in hits] == [("proposal-1", BODY)]
