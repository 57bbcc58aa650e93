"""Precision when there is nothing to find: the natural set asked without its answers.

The set has no question without an answer, so a lower bar's cost cannot show in notes-hit@3.
Each question is asked again with every fact holding its answer (current or stale) left out
of the hits: whatever note recall still shows then cannot answer. The rate of questions that
get such a note is the figure a change of the relevance score must not raise (ADR 0031
measured 0.111 on the development part at 0.55; ADR 0036 reports it beside each change).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import SearchQuery, namespace
from factledger.bench.natural.score import (
    NOTES,
    PARTS,
    RECALL_THRESHOLD,
    ingest_subject,
    questions_of,
)
from factledger.bench.progress import Advance, no_progress

WIDE = 50  # enough hits that leaving the answering ones out still leaves three to show


@dataclass(slots=True)
class NoAnswerTally:
    asked: int = 0
    with_note: int = 0  # questions shown at least one note that cannot answer
    notes: int = 0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "n": self.asked,
            "wrong_note_rate": round(self.with_note / self.asked, 4) if self.asked else 0.0,
            "wrong_notes_per_question": round(self.notes / self.asked, 2) if self.asked else 0.0,
        }


@dataclass(slots=True)
class NoAnswerScores:
    parts: dict[str, NoAnswerTally] = field(
        default_factory=lambda: {p: NoAnswerTally() for p in PARTS}
    )

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        total = NoAnswerTally()
        for tally in self.parts.values():
            total.asked += tally.asked
            total.with_note += tally.with_note
            total.notes += tally.notes
        return {"all": total.as_dict(), **{p: t.as_dict() for p, t in self.parts.items()}}


def unanswerable_notes(texts: Sequence[str], answer: str, stale: str | None) -> list[str]:
    """The first notes left once every text holding the answer or its stale value is out."""
    held = [v.lower() for v in (answer, stale) if v]
    return [t for t in texts if not any(v in t.lower() for v in held)][:NOTES]


async def run_no_answer(
    backend: MemoryBackend,
    run_id: str,
    subjects: Sequence[dict[str, Any]],
    advance: Advance = no_progress,
    *,
    threshold: float = RECALL_THRESHOLD,
) -> NoAnswerScores:
    scores = NoAnswerScores()
    for subject in subjects:
        ns = namespace(f"bench-{run_id}-no-answer-{subject['id']}")
        await ingest_subject(backend, ns, subject)
        for question in questions_of(subject):
            query = SearchQuery(
                text=question.text, threshold=threshold, limit=WIDE, include_superseded=True
            )
            current = [hit.text for hit in await backend.search(ns, query) if hit.is_latest]
            notes = unanswerable_notes(current, question.answer, question.stale)
            tally = scores.parts[question.part]
            tally.asked += 1
            tally.with_note += bool(notes)
            tally.notes += len(notes)
            advance(1)
        await backend.drop_namespace(ns)
    return scores
