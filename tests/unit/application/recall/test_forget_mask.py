"""The forget mask drops what the sync forgets, no more: it stays exact after the sync ran."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.decisions import decided
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.types import MemoryFact, Namespace, SearchQuery
from factledger.application.recall.forget_filter import (
    NOTHING_FORGOTTEN,
    FieldForget,
    ForgetMask,
    Rejection,
    Traces,
    unforgotten,
)
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

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


class CountingBackend(InMemoryMemoryBackend):
    """Counts `get_memory`, which recall needs for a hit's slot."""

    reads = 0

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        self.reads += 1
        return await super().get_memory(namespace, memory_id)


async def test_a_hits_slot_is_read_once_and_decides_with_the_syncs_rule() -> None:
    extractor = ScriptedExtractor()
    backend = CountingBackend(
        extractor=extractor, embedder=HashingEmbedder(dimension=512), clock=ManualClock()
    )
    said = [Message(Role.SUBJECT, "We left Supplier A, deliveries were late; we use Supplier B.")]
    extractor.script_transcript(
        said,
        ExtractedFact("f0", "left Supplier A because deliveries were late", "reason", (0,)),
        ExtractedFact("f1", "works with Supplier B", "supplier", (0,)),
    )
    ns = Namespace("subject-mask")
    await backend.ingest_transcript(ns, BEFORE, said, occurred_at=ManualClock().now())
    hits = await backend.search(ns, SearchQuery("Supplier deliveries", threshold=0.0, limit=5))
    traces = Traces()

    first = await unforgotten(hits, MASK, backend, ns, traces)
    again = await unforgotten(hits, MASK, backend, ns, traces)

    # the reason goes by its slot; the supplier, said in the same words, is still in the profile
    assert [h.text for h in first] == [h.text for h in again] == ["works with Supplier B"]
    assert backend.reads == len(hits) == 2


async def test_a_rejected_value_leaves_recall_by_the_syncs_rule_reading_slots_only_for_it() -> None:
    extractor = ScriptedExtractor()
    backend = CountingBackend(
        extractor=extractor, embedder=HashingEmbedder(dimension=512), clock=ManualClock()
    )
    said = [Message(Role.SUBJECT, "We use Supplier Tamarind; our dog is Supplier Tamarind too.")]
    extractor.script_transcript(
        said,
        ExtractedFact("f0", "works with Supplier Tamarind", "supplier", (0,)),
        ExtractedFact("f1", "their dog is called Supplier Tamarind", "pet", (0,)),
        ExtractedFact("f2", "orders boxes weekly", "supplier:boxes", (0,)),
    )
    ns = Namespace("subject-rejected")
    await backend.ingest_transcript(ns, BEFORE, said, occurred_at=ManualClock().now())
    hits = await backend.search(ns, SearchQuery("Tamarind supplier boxes", threshold=0.0, limit=5))
    rejection = Rejection(
        decided("supplier", ["supplier tamarind"], evidence_document=BEFORE), frozenset({BEFORE})
    )
    later = Rejection(rejection.decision, frozenset({AFTER}))

    kept = await unforgotten(hits, ForgetMask(rejections=(rejection,)), backend, ns, Traces())
    reads = backend.reads
    untouched = await unforgotten(hits, ForgetMask(rejections=(later,)), backend, ns, Traces())

    # the rejected value goes; the dog (another field) and the slot's other memory stay
    assert sorted(h.text for h in kept) == [
        "orders boxes weekly",
        "their dog is called Supplier Tamarind",
    ]
    assert reads == 2  # only the hits that state the rejected value had their slot read
    # a session recorded after the rejection is not its concern
    assert len(untouched) == len(hits) == 3
