"""How a transcript's new facts link to what exists, decided from two reads instead of a few
statements per fact (issue 19: a statement per fact and per link was most of the sync's
time on the event loop).

The rules are the in-memory backend's, applied to the facts in order as if each had been
written before the next was linked: a slotted fact supersedes the slot's newest current fact
(one written earlier in the same transcript included); without a slot, UPDATES supersedes
its targets; EXTENDS and DERIVES point at the targets that exist. `plan` reads the rows the
facts may link to once (`Neighbours`) and returns the rows to insert and the ids that stop
being current, which the caller writes in one pipeline, under the namespace's lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.types import RelationKind

HIDDEN = "(is_forgotten OR (expires_at IS NOT NULL AND expires_at <= %s))"
_POINTS_AT = (RelationKind.EXTENDS, RelationKind.DERIVES)


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to write under its deterministic id, its targets resolved to memory ids."""

    memory_id: str
    fact: ExtractedFact
    vector: np.ndarray[Any, Any]
    terms: list[str]
    targets: list[str]


@dataclass(slots=True)
class Neighbours:
    """What the database holds about the rows the new facts may link to."""

    versions: dict[str, int] = field(default_factory=dict)  # id -> version, rows that exist
    # slot -> ids of its current, visible rows, newest first
    current: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Linked:
    fact: NewFact
    relations: list[dict[str, str]]
    version: int


async def neighbours(
    conn: psycopg.AsyncConnection[Any], facts: Sequence[NewFact], now: datetime
) -> Neighbours:
    """The targets' versions and the current facts of the new facts' slots, in two reads."""
    found = Neighbours()
    targets = sorted({t for f in facts for t in f.targets})
    if targets:
        cur = await conn.execute("SELECT id, version FROM memories WHERE id = ANY(%s)", [targets])
        found.versions.update((row[0], row[1]) for row in await cur.fetchall())
    slots = sorted(
        {
            f.fact.slot
            for f in facts
            if f.fact.slot is not None and f.fact.relation not in _POINTS_AT
        }
    )
    if slots:
        cur = await conn.execute(
            f"SELECT id, slot, version FROM memories WHERE slot = ANY(%s) "  # noqa: S608
            f"AND is_latest AND NOT {HIDDEN} ORDER BY seq DESC",
            [slots, now],
        )
        for memory_id, slot, version in await cur.fetchall():
            found.versions[memory_id] = version
            found.current.setdefault(slot, []).append(memory_id)
    return found


def plan(facts: Sequence[NewFact], known: Neighbours) -> tuple[list[Linked], list[str]]:
    """Each fact's relations and version, in order, and the ids no longer current."""
    versions = dict(known.versions)
    current = {slot: list(ids) for slot, ids in known.current.items()}
    superseded: dict[str, None] = {}  # ordered set
    linked = []
    for new in facts:
        fact = new.fact
        if fact.relation in _POINTS_AT:
            kind = fact.relation.value
            relations = [{"kind": kind, "memory_id": t} for t in new.targets if t in versions]
            version = 1
        else:
            if fact.slot is not None:
                newest = next((i for i in current.get(fact.slot, []) if i not in superseded), None)
                replaced = [] if newest is None else [newest]
            elif fact.relation is RelationKind.UPDATES:
                replaced = new.targets
            else:
                replaced = []
            replaced = [i for i in replaced if i in versions]
            superseded.update(dict.fromkeys(replaced))
            relations = [{"kind": "updates", "memory_id": i} for i in replaced]
            version = max([1, *(versions[i] + 1 for i in replaced)])
        versions[new.memory_id] = version
        if fact.slot is not None:
            current.setdefault(fact.slot, []).insert(0, new.memory_id)
        linked.append(Linked(new, relations, version))
    return linked, list(superseded)
