"""The forget mask drops what the sync forgets, no more: it stays exact after the sync ran."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.application.recall.forgets import NOTHING_FORGOTTEN, FieldForget, ForgetMask

BEFORE, AFTER = "session.before", "session.after"
MASK = ForgetMask(
    memory_ids=frozenset({"mem-gone"}),
    fields=(FieldForget("reason", {BEFORE: frozenset({1})}, frozenset({BEFORE})),),
    current_fields=frozenset({"supplier"}),
)


@dataclass(frozen=True)
class Trace:
    slot: str | None
    document_id: str | None
    source_indexes: tuple[int, ...] = ()


def test_a_memory_forgotten_by_id_is_dropped_wherever_it_came_from() -> None:
    assert MASK.forgets(Trace(None, AFTER), "mem-gone", provenance=True)


def test_the_fields_slot_and_its_words_are_dropped_from_sessions_before_the_forget() -> None:
    assert MASK.forgets(Trace("reason", BEFORE, (4,)), "m1", provenance=True)
    assert MASK.forgets(Trace("intent:reason", BEFORE), "m2", provenance=True)
    assert MASK.forgets(Trace(None, BEFORE, (1,)), "m3", provenance=True)


def test_what_the_sync_keeps_stays() -> None:
    # a later session is ingested after the sync's forget: its memories are not concerned
    assert not MASK.forgets(Trace("reason", AFTER, (1,)), "m4", provenance=True)
    # other words of the same session, and a field still in the profile said in those words
    assert not MASK.forgets(Trace(None, BEFORE, (0,)), "m5", provenance=True)
    assert not MASK.forgets(Trace("supplier", BEFORE, (1,)), "m6", provenance=True)


def test_without_provenance_every_unslotted_memory_of_the_evidence_goes() -> None:
    assert MASK.forgets(Trace(None, BEFORE, (0,)), "m5", provenance=False)


def test_an_erased_subject_has_every_memory_dropped_and_nothing_forgotten_drops_nothing() -> None:
    erased = ForgetMask(erased=True)
    assert erased.forgets(Trace(None, AFTER), "any", provenance=True)
    assert not erased.empty
    assert NOTHING_FORGOTTEN.empty
    assert not NOTHING_FORGOTTEN.forgets(Trace("reason", BEFORE, (1,)), "m1", provenance=True)
