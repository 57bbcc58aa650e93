"""Links extracted facts into a namespace's memory graph (updates / extends / derives)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from factledger.adapters.in_memory.store import NamespaceState, StoredFact
from factledger.application.memory.extraction import ExtractedFact, KnownFact
from factledger.application.memory.lexical import extraction_terms, subject_label
from factledger.application.memory.ports import Vectors
from factledger.application.memory.rules import derive_memory_id
from factledger.application.memory.succession import SlotKeywords, succeed
from factledger.application.memory.types import MetadataValue, Namespace, Relation, RelationKind
from factledger.domain.transcript import Message


@dataclass(frozen=True, slots=True)
class Provenance:
    namespace: Namespace
    document_id: str
    occurred_at: datetime
    metadata: dict[str, MetadataValue]
    transcript: tuple[Message, ...] = ()  # what facts' source sentences are read from


def known_facts(state: NamespaceState, now: datetime) -> list[KnownFact]:
    """The current facts an extractor may link new ones to."""
    return [
        KnownFact(memory_id=f.id, text=f.text, slot=f.slot)
        for f in state.fact_rows
        if f.is_latest and not f.hidden(now)
    ]


def apply_facts(
    state: NamespaceState,
    source: Provenance,
    extracted: Sequence[ExtractedFact],
    vectors: Vectors,
    now: datetime,
) -> list[StoredFact]:
    """Adds the facts in order; the caller holds `state.lock`.

    - A fact with a slot supersedes the slot's current fact (one current fact per slot), even
      when the extractor did not say UPDATES, unless that fact was said later (its
      conversation's time): a value said earlier but ingested late (an imported January call
      after March's) is kept as already superseded, and the later-said value stays current.
      Without a slot, UPDATES supersedes `related_to`.
    - EXTENDS and DERIVES point at their targets; targets that do not exist are dropped.
    - A fact that supersedes its slot's current fact also takes the words that fact hands on
      (`application.memory.succession`).
    - A fact whose deterministic id already exists is skipped, so a replay adds nothing.
    """
    local: dict[str, str] = {}
    created: list[StoredFact] = []
    label = subject_label(source.metadata)
    terms = extraction_terms(extracted, source.transcript, label)
    for fact, vector, tokens in zip(extracted, vectors, terms, strict=True):
        memory_id = derive_memory_id(source.namespace, source.document_id, fact.key)
        local[fact.key] = memory_id
        if memory_id in state.facts:
            continue
        targets = [local.get(ref, ref) for ref in fact.related_to]
        relations, version, replaced, current = _link(state, fact, targets, source.occurred_at, now)
        keys = succeed(tokens, fact.text, fact.value, replaced)
        (row,) = state.fact_vectors.append(vector.reshape(1, -1))
        stored = StoredFact(
            id=memory_id,
            text=fact.text,
            slot=fact.slot,
            document_id=source.document_id,
            occurred_at=source.occurred_at,
            row=row,
            tokens=keys.terms,
            handed_on=keys.handed_on,
            metadata=dict(source.metadata),
            source_indexes=tuple(fact.source_indexes),
            condition=fact.condition,
            is_inference=fact.is_inference or fact.relation is RelationKind.DERIVES,
            relations=relations,
            version=version,
            is_latest=current,
        )
        state.add_fact(stored)
        created.append(stored)
    return created


def _link(
    state: NamespaceState,
    fact: ExtractedFact,
    targets: list[str],
    said_at: datetime,
    now: datetime,
) -> tuple[tuple[Relation, ...], int, SlotKeywords | None, bool]:
    """The fact's relations and version, what the slot's fact it supersedes keeps for it, and
    whether it is current (False: its slot's current fact was said after it)."""
    kind = fact.relation
    if kind is RelationKind.EXTENDS or kind is RelationKind.DERIVES:
        relations = tuple(Relation(kind, t) for t in dict.fromkeys(targets) if t in state.facts)
        return relations, 1, None, True
    superseded: list[StoredFact] = []
    replaced: SlotKeywords | None = None
    if fact.slot is not None:
        current = state.current_in_slot(fact.slot, now)
        if current is not None and current.occurred_at > said_at:
            return (), 1, None, False
        superseded = [current] if current is not None else []
        if current is not None:
            replaced = SlotKeywords(terms=current.tokens.keys(), handed_on=current.handed_on)
    elif fact.relation is RelationKind.UPDATES:
        superseded = [state.facts[t] for t in dict.fromkeys(targets) if t in state.facts]
    version = 1
    for old in superseded:
        old.is_latest = False
        version = max(version, old.version + 1)
    relations = tuple(Relation(RelationKind.UPDATES, old.id) for old in superseded)
    return relations, version, replaced, True
