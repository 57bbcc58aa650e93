"""Contract: the memory graph (updates keep history, extends keep both, derives infer)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    Capability,
    Namespace,
    ProcessingStatus,
    Relation,
    RelationKind,
    SearchQuery,
)
from factledger.testing.scripted_extractor import deriving, extending, stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-graph")


def query(text: str, **kwargs: object) -> SearchQuery:
    return SearchQuery(text=text, threshold=0.0, limit=10, **kwargs)  # type: ignore[arg-type]


async def supplier_a_then_b(ingest: Ingest) -> None:
    await ingest(
        NS, "call-1", "We source from Supplier A", stated("f0", "Supplier is A", slot="supplier")
    )
    await ingest(
        NS,
        "call-2",
        "We switched to Supplier B",
        stated("f0", "Supplier is B", slot="supplier", updates=True),
    )


async def test_an_update_makes_b_current_and_keeps_a_as_history(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await supplier_a_then_b(ingest)

    current = await backend.search(NS, query("supplier"))
    with_history = await backend.search(NS, query("supplier", include_superseded=True))
    memories = {m.text: m for m in await backend.list_memories(NS)}

    assert [h.text for h in current] == ["Supplier is B"]
    assert current[0].is_latest
    a, b = memories["Supplier is A"], memories["Supplier is B"]
    assert not a.is_latest
    assert b.is_latest
    assert b.version == a.version + 1
    assert Relation(RelationKind.UPDATES, a.id) in b.relations
    assert Relation(RelationKind.UPDATES, a.id) in current[0].relations
    assert {(h.text, h.is_latest) for h in with_history} == {
        ("Supplier is A", False),
        ("Supplier is B", True),
    }


async def test_get_memory_and_list_memories_show_the_chain(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await supplier_a_then_b(ingest)
    await ingest(
        NS,
        "call-3",
        "Now we use Supplier C",
        stated("f0", "Supplier is C", slot="supplier", updates=True),
    )

    everything = await backend.list_memories(NS)
    latest_only = await backend.list_memories(NS, include_superseded=False)
    c = next(m for m in everything if m.text == "Supplier is C")
    b = await backend.get_memory(NS, next(r.memory_id for r in c.relations))

    assert len(everything) == 3
    assert [m.text for m in latest_only] == ["Supplier is C"]
    assert c.version == 3
    assert b.text == "Supplier is B"
    assert not b.is_latest
    assert [r.kind for r in b.relations] == [RelationKind.UPDATES]
    if Capability.FACT_SLOTS in backend.capabilities:
        assert {m.slot for m in everything} == {"supplier"}
        assert b.slot == "supplier"
    else:  # a backend without slots must say so, never guess one
        assert {m.slot for m in everything} == {None}
        assert b.slot is None


async def test_an_extension_keeps_both_facts_current(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(
        NS, "call-1", "We source from Supplier A", stated("f0", "Supplier is A", slot="supplier")
    )
    await ingest(
        NS,
        "call-2",
        "Supplier A because they deliver on Sundays",
        extending("f0", "Supplier A delivers on Sundays", "slot:supplier"),
    )

    memories = {m.text: m for m in await backend.list_memories(NS)}
    hits = await backend.search(NS, query("Supplier A"))

    base, extension = memories["Supplier is A"], memories["Supplier A delivers on Sundays"]
    assert base.is_latest
    assert extension.is_latest
    assert Relation(RelationKind.EXTENDS, base.id) in extension.relations
    assert {h.text for h in hits} == {"Supplier is A", "Supplier A delivers on Sundays"}


async def test_a_derivation_is_an_inference_hidden_unless_asked(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(
        NS,
        "call-1",
        "We have three shops and open a fourth in March",
        stated("f0", "Has three shops", slot="shops"),
        stated("f1", "Opens a fourth shop in March", slot="expansion"),
        deriving("f2", "Business is growing shops", "f0", "f1"),
    )

    default = await backend.search(NS, query("shops growing"))
    with_inferred = await backend.search(NS, query("shops growing", include_inferred=True))
    memories = {m.text: m for m in await backend.list_memories(NS)}

    derived = memories["Business is growing shops"]
    assert derived.is_inference
    assert {r.kind for r in derived.relations} == {RelationKind.DERIVES}
    assert {r.memory_id for r in derived.relations} == {
        memories["Has three shops"].id,
        memories["Opens a fourth shop in March"].id,
    }
    assert all(not h.is_inference for h in default)
    assert "Business is growing shops" not in {h.text for h in default}
    inferred = [h for h in with_inferred if h.text == "Business is growing shops"]
    assert len(inferred) == 1
    assert inferred[0].is_inference


async def test_a_condition_is_kept_verbatim(backend: MemoryBackend, ingest: Ingest) -> None:
    await ingest(
        NS,
        "call-1",
        "Maybe next quarter, if the pricing works",
        stated("f0", "Might upgrade next quarter", condition="if the pricing works"),
    )

    (memory,) = await backend.list_memories(NS)
    (hit,) = await backend.search(NS, query("upgrade next quarter"))

    assert hit.id == memory.id
    if Capability.FACT_CONDITIONS in backend.capabilities:
        assert memory.condition == "if the pricing works"
        assert (await backend.get_memory(NS, memory.id)).condition == "if the pricing works"
    else:  # the hedge may live on in the text, but the field stays empty
        assert memory.condition is None
        assert (await backend.get_memory(NS, memory.id)).condition is None


async def test_list_memories_pages_without_overlap(backend: MemoryBackend, ingest: Ingest) -> None:
    await supplier_a_then_b(ingest)
    await ingest(NS, "call-3", "We open on Sundays", stated("f0", "Opens on Sundays"))

    first = await backend.list_memories(NS, limit=2, offset=0)
    second = await backend.list_memories(NS, limit=2, offset=2)
    beyond = await backend.list_memories(NS, limit=2, offset=3)

    assert len(first) == 2
    assert len(second) == 1
    assert beyond == []
    assert {m.id for m in first}.isdisjoint({m.id for m in second})
    assert {m.id for m in (*first, *second)} == {m.id for m in await backend.list_memories(NS)}
