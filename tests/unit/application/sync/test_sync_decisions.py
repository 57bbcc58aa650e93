"""Which memories a reviewer's decision takes out of recall (`sync.decisions`), over fixed
memories: by the value they state and the field their slot is about."""

from __future__ import annotations

from dataclasses import replace

from factledger.application.memory.decisions import decided, stale_memories
from factledger.application.memory.types import MemoryFact


def fact(
    memory_id: str,
    text: str,
    slot: str | None = None,
    *,
    document: str = "doc-1",
    latest: bool = True,
    forgotten: bool = False,
) -> MemoryFact:
    return MemoryFact(
        id=memory_id,
        text=text,
        slot=slot,
        is_latest=latest,
        is_inference=False,
        is_forgotten=forgotten,
        occurred_at=None,
        document_id=document,
    )


MEMORIES = [
    fact("m1", "works with Supplier Tamarind", "supplier"),
    fact("m2", "their packaging is sourced from Vireo Wraps these days"),
    fact("m3", "moved from supplier tamarind to Vireo Wraps", "supplier", document="doc-2"),
    fact("m4", "Tamarind is the name of their dog", "pet"),
    fact("m5", "worked with Supplier Tamarind before", "supplier", latest=False),
    fact("m6", "works with Supplier Tamarind", "supplier", forgotten=True),
    fact("m7", "likes Supplier Tamarind's boxes", document="doc-9"),
    fact("m8", "works with Kestrel Supplies", "supplier:boxes", document="doc-3"),
]


def test_a_rejection_takes_the_memories_that_state_the_rejected_value_of_the_field() -> None:
    decision = decided("supplier", ["supplier tamarind"], evidence_document="doc-1")
    # m1 states it in the field's slot; m3 states it too (no kept value holds it)
    assert stale_memories(MEMORIES, decision, slots=True) == ["m1", "m3"]


def test_a_memory_without_a_slot_goes_only_from_the_proposals_evidence_session() -> None:
    decision = decided("supplier", ["Supplier Tamarind"], evidence_document="doc-9")
    assert "m7" in stale_memories(MEMORIES, decision, slots=True)
    elsewhere = decided("supplier", ["Supplier Tamarind"], evidence_document="doc-1")
    assert "m7" not in stale_memories(MEMORIES, elsewhere, slots=True)


def test_without_slots_the_value_decides_and_other_fields_cannot_be_told_apart() -> None:
    memories = [replace(m, slot=None) for m in MEMORIES]
    decision = decided("supplier", ["Supplier Tamarind"], evidence_document="doc-1")
    assert stale_memories(memories, decision, slots=False) == ["m1"]


def test_a_memory_that_is_the_rejected_value_goes_whatever_its_slot() -> None:
    # An inference proposed with its own words as the value, slotted by the extractor under
    # another name: rejecting the proposal takes it, but not a memory that only mentions it
    inference = fact("i1", "price is an important factor for them", "insight:price_sensitivity")
    mention = fact("i2", "said price is an important factor for them, among others", "insight:x")
    decision = decided("insights", ["price is an important factor for them"])
    assert stale_memories([inference, mention, *MEMORIES], decision, slots=True) == ["i1"]


def test_an_approved_value_retires_the_replaced_values_and_the_rest_of_its_slot() -> None:
    decision = decided("supplier", ["Supplier Tamarind"], ["Vireo Wraps"], whole_slot=True)
    # m1 states the old value; m8 is a current memory of the slot that does not state the new
    # one; m3 names both and stays (it states the approved value); m2 says the approved value
    assert stale_memories(MEMORIES, decision, slots=True) == ["m1", "m7", "m8"]


def test_appending_to_a_list_retires_only_the_values_it_names() -> None:
    decision = decided("supplier", [], ["Vireo Wraps"], whole_slot=False)
    assert stale_memories(MEMORIES, decision, slots=True) == []


def test_a_value_that_is_kept_is_never_stale() -> None:
    decision = decided("supplier", ["SUPPLIER  tamarind", "Kestrel"], ["Supplier Tamarind"])
    assert decision.stale == ("Kestrel",)
    assert stale_memories(MEMORIES, decision, slots=True) == ["m8"]


def test_superseded_and_forgotten_memories_are_left_alone() -> None:
    decision = decided("supplier", ["Supplier Tamarind"])
    chosen = stale_memories(MEMORIES, decision, slots=True)
    assert "m5" not in chosen
    assert "m6" not in chosen


def test_a_rejection_takes_its_fields_memory_of_the_evidence_line_whatever_its_words() -> None:
    # The extractor rewrote "Our lease ends in August" (line 7): its words are not the value's.
    rewritten = replace(
        fact("r1", "their lease ends in August", "move_by_date"), source_indexes=(7,)
    )
    same_line_other_field = replace(
        fact("r2", "has two kids", "household_size"), source_indexes=(7,)
    )
    other_line = replace(fact("r3", "lease renewal in May", "move_by_date"), source_indexes=(9,))
    other_session = replace(rewritten, id="r4", document_id="doc-2")
    memories = [rewritten, same_line_other_field, other_line, other_session]
    decision = decided(
        "move_by_date", ["Our lease ends in August"], evidence_document="doc-1", evidence_lines=[7]
    )

    assert stale_memories(memories, decision, slots=True) == ["r1"]
    # Without slots the line alone could be any field's: only the value's words count.
    assert stale_memories(memories, decision, slots=False) == []
