"""Notes that repeat a forgotten memory's value: they go with it.

A reason given after a change is stored as an extension of the change whose note restates
it and names what it replaced: "switched to Y, previously X, because of the outages". So:

- forgetting the change Y leaves its words in the extension, which starts with Y's note;
- forgetting the replaced fact X leaves X in the extension's "previously X".

No backend behind the port can rewrite a memory's text (Supermemory's API has no such call),
so such an extension is forgotten with the memory whose value it repeats. The reason itself
is not lost to the ledger: a reason the subject confirmed is a profile field.

Pure selection over memories listed before the forget (their texts are still whole then);
already-forgotten extensions are not selected, so a retried forget selects nothing new.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Protocol

from factledger.application.memory.types import Relation, RelationKind

# What `rules.reasons.reason_note` writes between the change and the value it replaced.
PREVIOUSLY = ", previously "


class Linked(Protocol):
    """What the rule reads of a memory (a `MemoryFact`, or recall's view of one)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def relations(self) -> tuple[Relation, ...]: ...


def targets(memory: Linked, kind: RelationKind) -> list[str]:
    return [r.memory_id for r in memory.relations if r.kind is kind]


def repeats_value_of(extension: Linked, extended: Linked, forgotten: Collection[str]) -> bool:
    """Whether `extension` (which extends `extended`) repeats a forgotten memory's value:
    `extended` itself, restated at its start, or the fact it superseded, as "previously"."""
    if extended.id in forgotten and extension.text.startswith(extended.text):
        return True
    return PREVIOUSLY in extension.text and any(
        old in forgotten for old in targets(extended, RelationKind.UPDATES)
    )


def notes_repeating(forgotten: Collection[str], memories: Iterable[Linked]) -> list[str]:
    """The ids of memories outside `forgotten` that repeat a forgotten memory's value."""
    listed = list(memories)
    by_id: Mapping[str, Linked] = {m.id: m for m in listed}
    return [
        m.id
        for m in listed
        if m.id not in forgotten
        and any(
            (extended := by_id.get(target)) is not None and repeats_value_of(m, extended, forgotten)
            for target in targets(m, RelationKind.EXTENDS)
        )
    ]
