"""Which notes repeat a forgotten memory's value (`sync.carriers`)."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.application.memory.types import Relation, RelationKind
from factledger.application.sync.carriers import carriers_of


@dataclass(frozen=True)
class Fact:
    id: str
    text: str
    relations: tuple[Relation, ...] = ()


OLD = Fact("old", "orders from Linden Mills")
NEW = Fact("new", "orders from Kestrel Grain", (Relation(RelationKind.UPDATES, "old"),))
REASON = Fact(
    "why",
    "orders from Kestrel Grain, previously Linden Mills, because of the prices",
    (Relation(RelationKind.EXTENDS, "new"),),
)
CONTEXT = Fact("context", "asked for samples first", (Relation(RelationKind.EXTENDS, "new"),))
INSIGHT = Fact("insight", "price matters to them", (Relation(RelationKind.DERIVES, "why"),))
ALL = [OLD, NEW, REASON, CONTEXT, INSIGHT]


def test_forgetting_the_replaced_value_takes_the_reason_that_names_it() -> None:
    assert carriers_of({"old"}, ALL) == ["why"]


def test_forgetting_the_change_takes_the_reason_that_restates_it_but_not_other_context() -> None:
    # "asked for samples first" extends the change without repeating it: it stays.
    assert carriers_of({"new"}, ALL) == ["why"]


def test_an_unrelated_forget_takes_nothing_more() -> None:
    assert carriers_of({"insight"}, ALL) == []
    assert carriers_of(set(), ALL) == []


def test_a_reason_already_chosen_is_not_chosen_twice() -> None:
    assert carriers_of({"old", "why"}, ALL) == []


def test_a_reason_without_a_previous_value_stays_when_the_old_fact_goes() -> None:
    plain = Fact("plain", "orders from Kestrel Grain because of the prices", REASON.relations)
    assert carriers_of({"old"}, [OLD, NEW, plain]) == []
