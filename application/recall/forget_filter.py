"""Forgetting is immediate: recall drops what the ledger has forgotten, whatever the sync's lag.

The sync tells the backend later; until it has, the backend still returns a
forgotten memory. So recall reads the subject's forgets from the ledger alongside its search
(concurrently, so it adds no wait of its own) and drops every hit the sync forgets:

- a memory forgotten by id, and every memory of an erased subject;
- for a forgotten field, what the sync's own rule selects
  (`memory.forget_selection.is_forgotten_with`: the field's slot, or the words that evidenced
  it), among the memories of sessions recorded before the forget. A session recorded later
  is ingested after the sync's forget (the sync keeps each subject's order), so its memories
  are not the forget's concern and stay.

The mask is exact (it drops what the sync drops, no more), so it stays valid once the backend
has caught up and needs no confirmation from the sync. A hit is only checked
against a field when it comes from a session recorded before that field's forget; only then,
and only on a backend that fills slots, does recall read the memory's slot (`get_memory`),
once per memory: a memory's slot and words never change, so `Traces` keeps them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from cachetools import LRUCache

from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.decisions import (
    Decided,
    Stated,
    is_stale,
    said_in_evidence,
)
from factledger.application.memory.forget_selection import Traced, is_forgotten_with
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.sameness import any_states
from factledger.application.memory.types import (
    Capability,
    MemoryFact,
    Namespace,
    RelationKind,
    SearchHit,
)
from factledger.application.memory.value_repeats import PREVIOUSLY, repeats_value_of, targets
from factledger.application.recall.replaced import ReplacedStatement, without_replaced
from factledger.application.recall.requested import SpokenRequest, without_requested


@dataclass(frozen=True, slots=True)
class FieldForget:
    """A forgotten field as recall needs it: the words that evidenced it (message indexes by
    transcript document id) and the transcript documents recorded before its forget."""

    field: str
    evidence: Mapping[str, frozenset[int]]
    documents: frozenset[str]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A rejected proposal as recall needs it: what the sync's `reject` item decides by, and
    the transcript documents recorded before the rejection (later ones are not its concern)."""

    decision: Decided
    documents: frozenset[str]

    def may_retire(self, hit: SearchHit) -> bool:
        """Cheap first pass, on the hit alone: a memory of an earlier session that states the
        rejected value or was made from the line that said it. Superseded ones too: the sync
        retires only current memories, and a superseded one would date a later memory as
        "previously" the value a reviewer rejected, which was never true."""
        return hit.document_id in self.documents and (
            any_states(hit.text, self.decision.stale) or said_in_evidence(hit, self.decision)
        )

    def rejects(self, fact: Stated, *, slots: bool) -> bool:
        """Whether a memory read whole (its slot known) states the rejected value, by the
        sync's rule."""
        return fact.document_id in self.documents and is_stale(fact, self.decision, slots=slots)


@dataclass(frozen=True, slots=True)
class ForgetMask:
    """One subject's forgets, as of the ledger's latest version, and its rejected proposals
    (their memories leave recall at once too, before the sync's `reject` item has run)."""

    erased: bool = False
    memory_ids: frozenset[str] = frozenset()
    fields: tuple[FieldForget, ...] = ()
    current_fields: frozenset[str] = frozenset()  # still in the profile: their memories stay
    rejections: tuple[Rejection, ...] = ()
    # Statements a later statement of their field replaced (`recall.replaced`).
    replaced: tuple[ReplacedStatement, ...] = ()
    # Pending requests to forget, by what their sentence speaks of (`recall.requested`).
    requested: tuple[SpokenRequest, ...] = ()
    # Pending changes whose value such a request speaks of: never offered as pending values.
    withheld_changes: frozenset[UUID] = frozenset()

    @property
    def empty(self) -> bool:
        return not (
            self.erased
            or self.memory_ids
            or self.fields
            or self.rejections
            or self.replaced
            or self.requested
        )

    def by_id(self, memory_id: str) -> bool:
        return self.erased or memory_id in self.memory_ids

    def concerned(self, document_id: str | None) -> list[FieldForget]:
        """The forgotten fields a memory of `document_id` may belong to."""
        return [f for f in self.fields if document_id in f.documents]

    def forgets(self, memory: Traced, memory_id: str, *, provenance: bool) -> bool:
        """Whether the sync forgets (or has forgotten) this memory."""
        if self.by_id(memory_id):
            return True
        kept, has = self.current_fields, provenance
        return any(
            is_forgotten_with(memory, f.field, f.evidence, current_fields=kept, provenance=has)
            for f in self.concerned(memory.document_id)
        )


NOTHING_FORGOTTEN = ForgetMask()


@dataclass(frozen=True, slots=True)
class _SlotKnown:
    """A memory's slot and words, as read from the backend."""

    slot: str | None
    document_id: str | None
    source_indexes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _SlotUnknown:
    """A hit of a backend that fills no slots: the sync decides on its words alone."""

    document_id: str | None
    source_indexes: tuple[int, ...]
    slot: str | None = None


TRACES_KEPT = 50_000  # memories whose slot recall keeps: an id and a few short strings each


class Traces:
    """The slot and words of memories read once (least recently used go first)."""

    def __init__(self, kept: int = TRACES_KEPT) -> None:
        # cachetools' LRU; used from the event loop only, so without a lock.
        self._known: LRUCache[tuple[Namespace, str], Traced] = LRUCache(kept)

    def get(self, ns: Namespace, memory_id: str) -> Traced | None:
        return self._known.get((ns, memory_id))

    def put(self, ns: Namespace, memory_id: str, trace: Traced) -> None:
        self._known[(ns, memory_id)] = trace


async def unforgotten(
    hits: Sequence[SearchHit],
    mask: ForgetMask,
    backend: MemoryBackend,
    ns: Namespace,
    traces: Traces | None = None,
) -> list[SearchHit]:
    """`hits` without those the mask forgets, in their order."""
    if mask.empty:
        return list(hits)
    kept = without_replaced([h for h in hits if not mask.by_id(h.id)], mask.replaced)
    kept = without_requested(kept, mask.requested)
    provenance = Capability.FACT_PROVENANCE in backend.capabilities
    traces = traces or Traces()
    doubtful = [h for h in kept if mask.concerned(h.document_id)]
    if doubtful:
        traced = await _traces(doubtful, backend, ns, traces)
        forgotten = {
            h.id
            for h in doubtful
            if (trace := traced.get(h.id)) is None
            or mask.forgets(trace, h.id, provenance=provenance)
        }
        kept = [h for h in kept if h.id not in forgotten]
    rejected = await _rejected(kept, mask, backend, ns, traces)
    kept = [h for h in kept if h.id not in rejected]
    repeating = await repeating_hits(kept, mask, backend, ns, provenance=provenance)
    return [h for h in kept if h.id not in repeating]


@dataclass(frozen=True, slots=True)
class _Seen:
    """A hit as the decisions' rule reads it: its text, with the slot its trace holds."""

    text: str
    slot: str | None
    document_id: str | None
    source_indexes: tuple[int, ...]


async def _rejected(
    hits: Sequence[SearchHit],
    mask: ForgetMask,
    backend: MemoryBackend,
    ns: Namespace,
    traces: Traces,
) -> set[str]:
    """The hits the sync's `reject` items take out (`sync.decisions.is_stale`); a slot is read
    only for a hit that states a rejected value."""
    doubtful = {h.id: r for h in hits if (r := [x for x in mask.rejections if x.may_retire(h)])}
    if not doubtful:
        return set()
    chosen = [h for h in hits if h.id in doubtful]
    traced = await _traces(chosen, backend, ns, traces)
    slots = Capability.FACT_SLOTS in backend.capabilities
    return {
        h.id
        for h in chosen
        if (trace := traced.get(h.id)) is None
        or any(
            r.rejects(_Seen(h.text, trace.slot, h.document_id, h.source_indexes), slots=slots)
            for r in doubtful[h.id]
        )
    }


async def repeating_hits(
    hits: Sequence[SearchHit],
    mask: ForgetMask,
    backend: MemoryBackend,
    ns: Namespace,
    *,
    provenance: bool,
) -> set[str]:
    """The hits that repeat the value of a memory the mask forgets (`memory.value_repeats`). Only
    extensions can, and only they cost reads: what they extend, then (for a "previously"
    note) what that replaced; each step's reads run side by side."""
    pairs = [
        (hit, target)
        for hit in hits
        for target in targets(hit, RelationKind.EXTENDS)
        if PREVIOUSLY in hit.text or mask.fields or mask.by_id(target)
    ]
    if not pairs:
        return set()
    read = await _memories(backend, ns, {target for _, target in pairs})
    replaced = {
        old
        for hit, target in pairs
        if PREVIOUSLY in hit.text and target in read
        for old in targets(read[target], RelationKind.UPDATES)
        if not mask.by_id(old)
    }
    read |= await _memories(backend, ns, replaced - read.keys())

    def gone(memory_id: str) -> bool:
        fact = read.get(memory_id)
        return mask.by_id(memory_id) or (
            fact is not None and mask.forgets(fact, fact.id, provenance=provenance)
        )

    found: set[str] = set()
    for hit, target in pairs:
        extended = read.get(target)
        if extended is None:
            continue  # forgotten for good meanwhile: so is what repeats it, by the sync
        candidates = [target, *targets(extended, RelationKind.UPDATES)]
        if repeats_value_of(hit, extended, {c for c in candidates if gone(c)}):
            found.add(hit.id)
    return found


async def _memories(
    backend: MemoryBackend, ns: Namespace, ids: Collection[str]
) -> dict[str, MemoryFact]:
    """The memories of `ids` still in the backend, read side by side."""
    wanted = sorted(ids)
    outcomes = await asyncio.gather(
        *(backend.get_memory(ns, memory_id) for memory_id in wanted), return_exceptions=True
    )
    found: dict[str, MemoryFact] = {}
    for memory_id, outcome in zip(wanted, outcomes, strict=True):
        if isinstance(outcome, MemoryNotFoundError):
            continue  # forgotten for good meanwhile
        if isinstance(outcome, BaseException):
            raise outcome
        found[memory_id] = outcome
    return found


async def _traces(
    hits: Sequence[SearchHit], backend: MemoryBackend, ns: Namespace, known: Traces
) -> dict[str, Traced]:
    """Each hit's slot and words; a memory gone from the backend meanwhile has none."""
    if Capability.FACT_SLOTS not in backend.capabilities:
        return {h.id: _SlotUnknown(h.document_id, h.source_indexes) for h in hits}
    traces = {h.id: t for h in hits if (t := known.get(ns, h.id)) is not None}
    unknown = [h for h in hits if h.id not in traces]
    found = await asyncio.gather(
        *(backend.get_memory(ns, h.id) for h in unknown), return_exceptions=True
    )
    for hit, outcome in zip(unknown, found, strict=True):
        if isinstance(outcome, MemoryNotFoundError):
            continue  # forgotten for good meanwhile
        if isinstance(outcome, BaseException):
            raise outcome
        trace = _SlotKnown(outcome.slot, outcome.document_id, outcome.source_indexes)
        known.put(ns, hit.id, trace)
        traces[hit.id] = trace
    return traces


def remembered(fact: MemoryFact, mask: ForgetMask, *, provenance: bool, slots: bool) -> bool:
    """Whether a memory read by id (a superseded value shown as history) may be shown: not
    forgotten, no rejected value, and nothing a pending request to forget speaks of."""
    return (
        not fact.is_forgotten
        and not mask.forgets(fact, fact.id, provenance=provenance)
        and not any(r.rejects(fact, slots=slots) for r in mask.rejections)
        and not any(r.concerns(fact) for r in mask.requested)
    )
