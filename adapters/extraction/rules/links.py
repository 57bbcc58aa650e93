"""Links between facts: which slot fact updates which, and conclusions drawn from several.

Works on drafts (facts still being built) and on the facts the namespace already holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from factledger.adapters.extraction.rules.guidance import Derivation, Requirement
from factledger.application.memory.extraction import ExtractedFact, KnownFact
from factledger.application.memory.types import RelationKind


@dataclass(slots=True)
class Draft:
    """A fact being built; frozen into an `ExtractedFact` at the end."""

    key: str
    text: str
    slot: str | None
    sources: list[int]
    relation: RelationKind | None = None
    related_to: list[str] = field(default_factory=list)
    is_inference: bool = False
    condition: str | None = None
    valid_from: datetime | None = None
    value: str | None = None
    negated: bool = False

    def freeze(self) -> ExtractedFact:
        return ExtractedFact(
            key=self.key,
            text=self.text,
            slot=self.slot,
            source_indexes=tuple(sorted(set(self.sources))),
            relation=self.relation,
            related_to=tuple(self.related_to),
            is_inference=self.is_inference,
            condition=self.condition,
            valid_from=self.valid_from,
            value=self.value,
            negated=self.negated,
        )


def update_targets(slot: str, drafts: Sequence[Draft], known: Sequence[KnownFact]) -> list[str]:
    """What a new fact of `slot` supersedes: the latest earlier draft of the slot, else the
    namespace's current facts of it."""
    earlier = [d for d in drafts if d.slot == slot]
    if earlier:
        return [earlier[-1].key]
    return [k.memory_id for k in known if k.slot == slot]


def derive(
    rules: Sequence[Derivation], drafts: Sequence[Draft], known: Sequence[KnownFact], key: str
) -> list[Draft]:
    """Conclusions whose requirements the facts meet; each uses at least one new fact."""
    derived: list[Draft] = []
    taken_slots = {d.slot for d in drafts} | {k.slot for k in known}
    for rule in rules:
        if rule.slot in taken_slots:
            continue
        used = _satisfy(rule.requires, drafts, known)
        if used is None or not any(isinstance(u, Draft) for u in used):
            continue
        new = [u for u in used if isinstance(u, Draft)]
        derived.append(
            Draft(
                key=f"{key}{len(derived)}",
                text=rule.text,
                slot=rule.slot,
                sources=sorted({i for d in new for i in d.sources}),
                relation=RelationKind.DERIVES,
                related_to=[u.key if isinstance(u, Draft) else u.memory_id for u in used],
                is_inference=True,
            )
        )
        taken_slots.add(rule.slot)
    return derived


def _satisfy(
    requires: Sequence[Requirement], drafts: Sequence[Draft], known: Sequence[KnownFact]
) -> list[Draft | KnownFact] | None:
    used: list[Draft | KnownFact] = []
    candidates: list[Draft | KnownFact] = [*drafts, *known]
    for requirement in requires:
        match = next((c for c in candidates if c not in used and _meets(c, requirement)), None)
        if match is None:
            return None
        used.append(match)
    return used


def _meets(fact: Draft | KnownFact, requirement: Requirement) -> bool:
    if fact.slot is not None and fact.slot.startswith("insight:"):
        return False  # conclusions never feed other conclusions
    if requirement.slot is not None and not _slot_matches(fact.slot, requirement.slot):
        return False
    if requirement.updates and not (
        isinstance(fact, Draft) and fact.relation is RelationKind.UPDATES
    ):
        return False
    if requirement.any_words:
        words = set(re.findall(r"[a-z]+", fact.text.lower()))
        return bool(words & requirement.any_words)
    return True


def _slot_matches(slot: str | None, wanted: str) -> bool:
    return slot is not None and (slot == wanted or slot.startswith(wanted + ":"))
