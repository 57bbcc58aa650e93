"""Contract: metadata filters (eq, ranges, in, array contains, and/or) inside one namespace."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    AllOf,
    AnyOf,
    Condition,
    Filter,
    FilterOp,
    Namespace,
    ProcessingStatus,
    SearchQuery,
)
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-filters")
OTHER = Namespace("subject-filters-other")
CALLS = {
    "call-1": {"channel": "chat", "priority": 1, "day": "2025-01-10", "tags": ("billing",)},
    "call-2": {"channel": "voice", "priority": 5, "day": "2025-02-20", "tags": ("billing", "vip")},
    "call-3": {"channel": "email", "priority": 3, "day": "2025-03-30", "tags": ("support",)},
}


async def load(ingest: Ingest) -> None:
    for document_id, metadata in CALLS.items():
        text = f"Order question raised in {document_id}"
        await ingest(NS, document_id, text, stated("f0", text), metadata=metadata)
    # The other namespace matches every filter below: none of it may ever come back.
    for document_id, metadata in CALLS.items():
        text = f"Order question raised in {document_id} elsewhere"
        await ingest(OTHER, document_id, text, stated("f0", text), metadata=metadata)


CASES: list[tuple[str, Filter, set[str]]] = [
    ("eq", Condition("channel", FilterOp.EQ, "voice"), {"call-2"}),
    ("neq", Condition("channel", FilterOp.NEQ, "voice"), {"call-1", "call-3"}),
    ("gte", Condition("priority", FilterOp.GTE, 3), {"call-2", "call-3"}),
    ("lt", Condition("priority", FilterOp.LT, 3), {"call-1"}),
    ("date range", Condition("day", FilterOp.GT, "2025-02-01"), {"call-2", "call-3"}),
    ("in", Condition("channel", FilterOp.IN, ("chat", "email")), {"call-1", "call-3"}),
    ("contains", Condition("tags", FilterOp.ARRAY_CONTAINS, "billing"), {"call-1", "call-2"}),
    (
        "and",
        AllOf(
            (
                Condition("tags", FilterOp.ARRAY_CONTAINS, "billing"),
                Condition("priority", FilterOp.GT, 2),
            )
        ),
        {"call-2"},
    ),
    (
        "or",
        AnyOf((Condition("channel", FilterOp.EQ, "chat"), Condition("priority", FilterOp.GTE, 5))),
        {"call-1", "call-2"},
    ),
    (
        "nested",
        AllOf(
            (
                AnyOf(
                    (
                        Condition("channel", FilterOp.EQ, "chat"),
                        Condition("channel", FilterOp.EQ, "email"),
                    )
                ),
                Condition("day", FilterOp.LTE, "2025-03-01"),
            )
        ),
        {"call-1"},
    ),
    ("missing key", Condition("region", FilterOp.EQ, "north"), set()),
]


@pytest.mark.parametrize(("name", "node", "expected"), CASES, ids=[c[0] for c in CASES])
async def test_filters_select_inside_the_namespace(
    backend: MemoryBackend, ingest: Ingest, name: str, node: Filter, expected: set[str]
) -> None:
    await load(ingest)

    hits = await backend.search(
        NS, SearchQuery("order question", threshold=0.0, limit=10, filters=node)
    )

    assert {h.document_id for h in hits} == expected
    assert all("elsewhere" not in h.text for h in hits)
