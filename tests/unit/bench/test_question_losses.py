"""The losses tool's question mode puts each lost question and each stale note in the first
class that holds (`bench.evalsets.question_losses`), from what it kept beside the recall."""

from __future__ import annotations

from factledger.application.memory.types import HitKind, SearchHit
from factledger.application.recall.types import Note, NoteKind, NoteOrigin, RecallResult
from factledger.bench.evalsets.cases import parse_cases
from factledger.bench.evalsets.question_losses import Change, Seen, Turn, miss_class, stale_class
from factledger.domain.provenance import ChangeStatus, Operation

from .test_blind_evalsets import CASE

(SALES,) = parse_cases(CASE)
NOW = SALES.sessions[1].questions[0]  # "Which vendor ... now?": Cartonia, stale Boxmart


def seen(text: str, score: float, dropped: str | None = None) -> Seen:
    hit = SearchHit(text, text, score, HitKind.MEMORY, True, False, None, "doc", (), False)
    return Seen(hit, dropped)


def turn(*hits: Seen, notes: tuple[str, ...] = (), changes: tuple[Change, ...] = ()) -> Turn:
    result = RecallResult(tuple(Note(t, NoteOrigin(NoteKind.MEMORY, t)) for t in notes))
    return Turn(NOW.text, result, hits, changes, 0.55, "supplier")


def change(value: str, status: ChangeStatus, order: int) -> Change:
    return Change("supplier", value, status, Operation.SET, "s", 0, order)


def test_a_lost_question_is_classed_by_where_its_answer_is() -> None:
    assert miss_class(SALES, 1, NOW, turn(seen("switched to Cartonia", 0.3))) == "below_threshold"
    gone = seen("switched to Cartonia", 0.9, "replaced")
    assert miss_class(SALES, 1, NOW, turn(gone)) == "filtered:replaced"
    pending = turn(changes=(change("Cartonia", ChangeStatus.PENDING, 1),))
    assert miss_class(SALES, 1, NOW, pending) == "only_pending:asked_this"
    assert miss_class(SALES, 1, NOW, turn()) == "never_a_memory:in_a_subject_line"


def test_a_stale_note_is_classed_by_what_the_ledger_knows_of_its_value() -> None:
    rejected = (change("Boxmart", ChangeStatus.REJECTED, 0),)
    text = "buys from Boxmart"
    assert stale_class(SALES, 1, NOW, turn(changes=rejected), text) == "rejected_value_offered"
    later = (
        change("Boxmart", ChangeStatus.SUPERSEDED, 0),
        change("Cartonia", ChangeStatus.PENDING, 1),
    )
    assert (
        stale_class(SALES, 1, NOW, turn(changes=later), text)
        == "replaced_value_not_recognised:later_proposed_for_field"
    )
