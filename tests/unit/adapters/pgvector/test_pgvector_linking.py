"""`adapters.pgvector.linking.plan`: a transcript's facts linked as if written one by one."""

from __future__ import annotations

import numpy as np

from factledger.adapters.pgvector.linking import Neighbours, NewFact, plan
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.types import RelationKind

VECTOR = np.zeros(3, dtype=np.float32)


def new(memory_id: str, slot: str | None, relation: RelationKind | None = None,
        targets: tuple[str, ...] = ()) -> NewFact:  # fmt: skip
    fact = ExtractedFact(memory_id, f"text of {memory_id}", slot, (0,), relation, targets)
    return NewFact(memory_id, fact, VECTOR, [], list(targets))


def test_a_slotted_fact_supersedes_the_newest_current_one_and_counts_on() -> None:
    known = Neighbours(versions={"old": 3, "older": 1}, current={"supplier": ["old", "older"]})
    linked, superseded = plan([new("a", "supplier")], known)
    assert [(x.relations, x.version) for x in linked] == [
        ([{"kind": "updates", "memory_id": "old"}], 4)
    ]
    assert superseded == ["old"]


def test_a_second_fact_of_a_slot_supersedes_the_first_of_the_same_transcript() -> None:
    known = Neighbours(versions={"old": 1}, current={"supplier": ["old"]})
    linked, superseded = plan([new("a", "supplier"), new("b", "supplier")], known)
    assert [x.relations[0]["memory_id"] for x in linked] == ["old", "a"]
    assert [x.version for x in linked] == [2, 3]
    assert superseded == ["old", "a"]


def test_updates_without_a_slot_supersede_the_targets_that_exist() -> None:
    known = Neighbours(versions={"t1": 2})
    linked, superseded = plan([new("a", None, RelationKind.UPDATES, ("t1", "gone"))], known)
    assert linked[0].relations == [{"kind": "updates", "memory_id": "t1"}]
    assert (linked[0].version, superseded) == (3, ["t1"])


def test_extends_points_at_existing_targets_and_supersedes_nothing() -> None:
    known = Neighbours(versions={"t1": 5}, current={"supplier": ["t1"]})
    facts = [new("a", None), new("b", "supplier", RelationKind.EXTENDS, ("t1", "a", "gone"))]
    linked, superseded = plan(facts, known)
    assert linked[1].relations == [
        {"kind": "extends", "memory_id": "t1"},
        {"kind": "extends", "memory_id": "a"},
    ]
    assert (linked[1].version, superseded) == (1, [])


def test_a_slot_whose_current_fact_was_superseded_by_an_update_has_none_left() -> None:
    known = Neighbours(versions={"old": 1}, current={"supplier": ["old"]})
    facts = [new("a", None, RelationKind.UPDATES, ("old",)), new("b", "supplier")]
    linked, superseded = plan(facts, known)
    assert linked[1].relations == []
    assert (linked[1].version, superseded) == (1, ["old"])
