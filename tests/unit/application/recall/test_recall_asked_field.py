"""The field a turn's question asks about: its confirmed value first, then its newest pending
value still holding marked unconfirmed, then the memories (`recall.asked`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

import numpy as np

from factledger.application.memory.types import HitKind, QueryVector, SearchHit
from factledger.application.recall.asked import note_of, offered_pending
from factledger.application.recall.forget_filter import NOTHING_FORGOTTEN
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.ports import TurnLedger
from factledger.application.recall.replaced import ReplacedStatement
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.sources import OpenProposal, ProfileEntry
from factledger.application.recall.types import Note, NoteKind
from factledger.domain.provenance import Operation
from factledger.domain.values import ListValue, render
from tests.unit.application.recall.test_recall import (
    JAN,
    MAR,
    SUBJECT,
    FixedSources,
    seeded_backend,
)

POLICY = RecallPolicy(threshold=0.3)


def asked_pending(*args: Any, **kwargs: Any) -> tuple[Note, ...]:
    """The asked field's pending values as recall offers them, as notes."""
    return tuple(map(note_of, offered_pending(*args, **kwargs)))


QUESTION = "works with supplier"


def pending(field: str, value: str, at_day: int, *, inferred: bool = False) -> OpenProposal:
    at = JAN + timedelta(days=at_day)
    return OpenProposal(uuid.uuid4(), field, value, None, inferred, at, None)


# Proposed after the seeded memories were said (January and March): no later answer.
OLD_BUDGET = pending("budget", "25,000 dollars", 1)
NEW_BUDGET = pending("budget", "40,000 dollars", 70)
TEAM = pending("team_size", "12 people", 71)


class Asks:
    """An `AskedFields` that reads every question of `kind` as asking about `field`, and
    ranks `ranked` first when unsure; its vectors are its own (the backend embeds the query
    itself)."""

    def __init__(self, kind: str, field: str | None, ranked: Sequence[str] = ()) -> None:
        self.kind, self.field, self.reads, self.ranked = kind, field, 0, tuple(ranked)

    async def query_vector(self, text: str) -> QueryVector | None:
        return QueryVector(text, self, np.ones(2, dtype=np.float32))

    def field_of(self, kind: str, vector: QueryVector) -> str | None:
        self.reads += 1
        return self.field if kind == self.kind else None

    def ranked_fields(self, kind: str, vector: QueryVector) -> Sequence[str]:
        return self.ranked if kind == self.kind else ()


class Turns:
    def __init__(
        self,
        kind: str | None,
        profile: Sequence[ProfileEntry] = (),
        open_changes: Sequence[OpenProposal] = (),
    ) -> None:
        self.ledger = TurnLedger(profile, NOTHING_FORGOTTEN, kind=kind, pending=open_changes)

    async def turn(self, subject_id: uuid.UUID) -> TurnLedger:
        return self.ledger


async def recall(turns: Turns, asks: Asks | None) -> Recall:
    ports = RecallPorts(
        await seeded_backend(),
        FixedSources(),
        RecallPolicies(default=POLICY),
        turns=turns,
        asked_fields=asks,
    )
    return Recall(ports)


async def test_the_asked_fields_newest_pending_value_comes_before_the_memories() -> None:
    turns = Turns("lead", open_changes=[OLD_BUDGET, NEW_BUDGET, TEAM])
    result = await (await recall(turns, Asks("lead", "budget"))).recall(SUBJECT, QUESTION)
    first = result.notes[0]
    assert first.origin.kind is NoteKind.PROPOSAL
    assert first.origin.ref == str(NEW_BUDGET.change_id)
    assert first.text == "budget: 40,000 dollars (stated, unconfirmed)"
    texts = [n.text for n in result.notes]
    # The value a later statement changed, and another field's, are not offered.
    assert not any("25,000" in t or "12 people" in t for t in texts)
    assert [n.origin.kind for n in result.notes[1:]] == [NoteKind.MEMORY]


async def test_a_confirmed_value_of_the_asked_field_comes_before_its_pending_one() -> None:
    confirmed = ProfileEntry("budget", "30,000 dollars", None, False, JAN, None)
    later = pending("budget", "40,000 dollars", 70)  # said after the confirmation
    turns = Turns("lead", profile=[confirmed], open_changes=[later])
    result = await (await recall(turns, Asks("lead", "budget"))).recall(SUBJECT, QUESTION)
    kinds = [n.origin.kind for n in result.notes]
    assert kinds[:2] == [NoteKind.PROFILE, NoteKind.PROPOSAL]
    assert result.notes[0].text == "budget: 30,000 dollars"


async def test_without_a_kind_or_a_reader_the_notes_are_the_memories_as_before() -> None:
    changes = [NEW_BUDGET]
    asks = Asks("lead", "budget")
    unknown = await (await recall(Turns(None, open_changes=changes), asks)).recall(
        SUBJECT, QUESTION
    )
    unread = await (await recall(Turns("lead", open_changes=changes), None)).recall(
        SUBJECT, QUESTION
    )
    assert asks.reads == 0  # no kind: nothing to read the question against
    for result in (unknown, unread):
        assert [n.origin.kind for n in result.notes] == [NoteKind.MEMORY]
        assert result.notes[0].text == "works with Supplier B, previously Supplier A"


async def test_sure_of_no_field_the_most_probable_field_holding_a_value_is_offered() -> None:
    turns = Turns("lead", open_changes=[NEW_BUDGET, TEAM])
    ranked = ["supplier", "employer", "team_size", "budget"]
    result = await (await recall(turns, Asks("lead", None, ranked))).recall(SUBJECT, QUESTION)
    assert result.notes[0].origin.ref == str(TEAM.change_id)
    # Sure of a field: that one first, held or not (a question about an empty field gets no
    # other field's value before the memories; ADR 0132: in an empty place after them).
    for sure, first in (("budget", NoteKind.PROPOSAL), ("supplier", NoteKind.MEMORY)):
        asks = Asks("lead", sure, ranked=["team_size", "budget"])
        result = await (await recall(turns, asks)).recall(SUBJECT, QUESTION)
        assert result.notes[0].origin.kind is first
        refs = [n.origin.ref for n in result.notes]
        after = (
            result.notes[refs.index(str(TEAM.change_id)) :] if str(TEAM.change_id) in refs else ()
        )
        assert all(n.origin.kind is not NoteKind.MEMORY for n in after)


async def test_empty_places_take_the_other_held_fields_pending_values_most_probable_first() -> None:
    turns = Turns("lead", open_changes=[OLD_BUDGET, NEW_BUDGET, TEAM])
    ranked = ["employer", "team_size", "budget"]
    result = await (await recall(turns, Asks("lead", "budget", ranked))).recall(SUBJECT, QUESTION)
    refs = [n.origin.ref for n in result.notes]
    # The asked field's value, the memory, then the most probable other field held; never
    # the asked field's older value, and never past the policy's limit.
    assert [n.origin.kind for n in result.notes] == [
        NoteKind.PROPOSAL,
        NoteKind.MEMORY,
        NoteKind.PROPOSAL,
    ]
    assert refs[0] == str(NEW_BUDGET.change_id)
    assert refs[2] == str(TEAM.change_id)
    assert str(OLD_BUDGET.change_id) not in refs
    # Only the heads' most probable fields fill: a held field ranked past them does not.
    far = ["employer", "supplier", "region", "role", "plan", "team_size"]
    result = await (await recall(turns, Asks("lead", "budget", far))).recall(SUBJECT, QUESTION)
    assert str(TEAM.change_id) not in [n.origin.ref for n in result.notes]


def test_pending_values_never_offered_inferences_repeats_of_the_confirmed_or_older_ones() -> None:
    inferred = pending("budget", "a large budget", 30, inferred=True)
    confirmed = [ProfileEntry("budget", "40000 dollars", None, False, MAR, None)]
    assert asked_pending("budget", [inferred], []) == ()
    # The confirmed value, said the same way or not, is a profile note already.
    assert asked_pending("budget", [NEW_BUDGET], confirmed) == ()
    assert [n.origin.ref for n in asked_pending("budget", [OLD_BUDGET, NEW_BUDGET], [])] == [
        str(NEW_BUDGET.change_id)
    ]
    # A later confirmed value supersedes an older pending one.
    assert asked_pending("budget", [OLD_BUDGET], confirmed) == ()


def memory(text: str, at_day: int, *, latest: bool = True) -> SearchHit:
    at = JAN + timedelta(days=at_day)
    return SearchHit(text, text, 0.8, HitKind.MEMORY, latest, False, at, None)


def test_a_later_memory_answering_the_question_otherwise_withholds_the_pending_value() -> None:
    plan = pending("plan", "the starter plan", 1)
    upgraded = memory("upgraded to Business last week", 30)
    assert asked_pending("plan", [plan], [], hits=[upgraded]) == ()
    # The newest answer states the pending value, or came before it, or is a superseded one
    # or not the turn's best: the value is offered.
    kept = (
        [memory("still on the starter plan", 30)],
        [memory("upgraded to Business last week", 0)],
        [memory("upgraded to Business last week", 30, latest=False)],
        [memory("on the starter plan", 0), upgraded],
    )
    for hits in kept:
        assert [n.origin.ref for n in asked_pending("plan", [plan], [], hits=hits)] == [
            str(plan.change_id)
        ]


def test_words_read_as_another_fields_replaced_value_are_not_offered() -> None:
    firmware = OpenProposal(
        uuid.uuid4(), "operating_system", "firmware 2.4.0", None, False, JAN, "s1"
    )
    replaced = ReplacedStatement(
        "product_version",
        "doc-s1",
        3,
        frozenset(),
        ("updated to 2.5.1",),
        None,
        ("firmware 2.4.0",),
        "s1",
    )
    assert asked_pending("operating_system", [firmware], [], [replaced]) == ()
    # Withheld for a request to forget (nothing current), or said in another session: offered.
    forgotten = replace(replaced, current=())
    elsewhere = replace(replaced, session_id="s0")
    for other in (forgotten, elsewhere):
        assert len(asked_pending("operating_system", [firmware], [], [other])) == 1


async def test_the_asked_fields_newer_pending_value_outdates_earlier_sessions_memories() -> None:
    later = MAR + timedelta(days=10)
    newer = replace(pending("supplier", "Supplier C", 0), proposed_at=later, said_at=later)
    turns = Turns("lead", open_changes=[newer])
    result = await (await recall(turns, Asks("lead", "supplier"))).recall(SUBJECT, QUESTION)
    # The memories of January and March say another supplier: what the newer value outdated.
    assert [n.origin.ref for n in result.notes] == [str(newer.change_id)]

    kept = {
        "a memory that states it": replace(newer, value="Supplier B"),
        "a list field's item": replace(newer, operation=Operation.APPEND),
        "said when nobody knows": replace(newer, said_at=None),
        "said before the memories": replace(newer, said_at=JAN),
    }
    for why, change in kept.items():
        result = await (
            await recall(Turns("lead", open_changes=[change]), Asks("lead", "supplier"))
        ).recall(SUBJECT, QUESTION)
        kinds = [n.origin.kind for n in result.notes]
        assert NoteKind.MEMORY in kinds, why


def listed(field: str, items: tuple[str, ...], at_day: int, operation: Operation) -> OpenProposal:
    typed = ListValue(items)
    return replace(pending(field, render(typed), at_day), typed=typed, operation=operation)


def test_a_later_removal_takes_its_items_off_the_offered_list_and_is_no_value() -> None:
    intake = listed("medications", ("metformin", "atorvastatin", "aspirin"), 1, Operation.APPEND)
    stopped = listed("medications", ("aspirin",), 30, Operation.REMOVE)

    (offered,) = offered_pending("medications", [intake, stopped], [])
    assert (offered.change_id, offered.typed) == (
        intake.change_id,
        ListValue(("metformin", "atorvastatin")),
    )
    assert note_of(offered).text == "medications: metformin, atorvastatin (stated, unconfirmed)"
    # A removal said before the extension takes nothing off it; a removal is never a value.
    earlier = listed("medications", ("aspirin",), 0, Operation.REMOVE)
    assert offered_pending("medications", [intake, earlier], []) == (intake,)
    assert offered_pending("medications", [stopped], []) == ()
    # An extension whose every item a later removal takes off is offered no more.
    everything = listed(
        "medications", ("metformin", "atorvastatin", "aspirin"), 40, Operation.REMOVE
    )
    assert offered_pending("medications", [intake, everything], []) == ()
