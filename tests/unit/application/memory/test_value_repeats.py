"""Which notes repeat a forgotten memory's value (`memory.value_repeats`)."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.application.memory.types import Relation, RelationKind
from factledger.application.memory.value_repeats import notes_repeating


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
    assert notes_repeating({"old"}, ALL) == ["why"]


def test_forgetting_the_change_takes_the_reason_that_restates_it_but_not_other_context() -> None:
    # "asked for samples first" extends the change without repeating it: it stays.
    assert notes_repeating({"new"}, ALL) == ["why"]


def test_an_unrelated_forget_takes_nothing_more() -> None:
    assert notes_repeating({"insight"}, ALL) == []
    assert notes_repeating(set(), ALL) == []


def test_a_reason_already_chosen_is_not_chosen_twice() -> None:
    assert notes_repeating({"old", "why"}, ALL) == []


def test_a_reason_without_a_previous_value_stays_when_the_old_fact_goes() -> None:
    plain = Fact("plain", "orders from Kestrel Grain because of the prices", REASON.relations)
    assert notes_repeating({"old"}, [OLD, NEW, plain]) == []
