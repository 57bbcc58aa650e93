"""Scores the natural-question set through the memory port, as per-turn recall asks.

- Each subject's sessions are ingested as transcripts into its own namespace, with the
  metadata the product's sync gives (no subject label), so the figures are the product's.
- Each question runs the recall query (memories, threshold 0.55, superseded facts asked for
  but kept out of the notes) and keeps the first three current facts: the notes an agent gets.
- notes-hit@3: a note holds the current answer. ranked-hit@3: the same with no threshold (the
  ranking alone, what calibrating the threshold could at most let through).
- Stale as current: a note holds the superseded value and not the current one.
  Cross-subject: a note holds a value that belongs to another subject, as whole words and
  outside this subject's own values (a supplier "Juniper Bags" is not another subject's pet
  "Juniper"; ADR 0031).
- Notes shown and the share of them that hold the answer: what the notes cost in prompt space
  (a lower threshold shows more notes that answer nothing).
- "Paraphrase" questions share no keyword with any sentence holding their answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.scoring import keyword_tokens
from factledger.application.memory.types import (
    IngestMode,
    Namespace,
    SearchHit,
    SearchQuery,
    namespace,
)
from factledger.bench.progress import Advance, no_progress
from factledger.domain.transcript import Message, Role

DEFAULT_SET = Path("tests/data/natural_questions.yaml")
NOTES = 3
RECALL_THRESHOLD = 0.55
PARTS = ("dev", "heldout")
_ROLES = {"agent": Role.AGENT, "subject": Role.SUBJECT}


@dataclass(frozen=True, slots=True)
class Question:
    subject: str
    part: str
    topic: str
    text: str
    answer: str
    stale: str | None
    paraphrase: bool


@dataclass(slots=True)
class Tally:
    asked: int = 0
    hits: int = 0
    stale_as_current: int = 0
    cross_subject: int = 0
    paraphrases: int = 0
    paraphrase_hits: int = 0
    ranked_hits: int = 0  # the answer among the first three current facts, with no threshold
    notes: int = 0  # notes shown
    answering: int = 0  # notes shown that hold the answer

    def as_dict(self) -> dict[str, float | int]:
        return {
            "n": self.asked,
            "notes_hit@3": round(self.hits / self.asked, 4) if self.asked else 0.0,
            "ranked_hit@3": round(self.ranked_hits / self.asked, 4) if self.asked else 0.0,
            "stale_as_current": self.stale_as_current,
            "cross_subject": self.cross_subject,
            "notes_per_question": round(self.notes / self.asked, 2) if self.asked else 0.0,
            "notes_answering": round(self.answering / self.notes, 4) if self.notes else 0.0,
            "paraphrases": self.paraphrases,
            "paraphrase_hit@3": (
                round(self.paraphrase_hits / self.paraphrases, 4) if self.paraphrases else 0.0
            ),
        }


@dataclass(slots=True)
class NaturalScores:
    parts: dict[str, Tally] = field(default_factory=lambda: {p: Tally() for p in PARTS})
    misses: list[str] = field(default_factory=list)  # question texts, for `--verbose` reading

    def as_dict(self) -> dict[str, Any]:
        total = Tally()
        for tally in self.parts.values():
            for name in Tally.__slots__:
                setattr(total, name, getattr(total, name) + getattr(tally, name))
        return {"all": total.as_dict(), **{p: t.as_dict() for p, t in self.parts.items()}}


def load_set(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        subjects: list[dict[str, Any]] = yaml.safe_load(handle)["subjects"]
    return subjects


def _transcript(session: dict[str, Any]) -> list[Message]:
    at = datetime.fromisoformat(session["at"])
    return [Message(_ROLES[role], text, at) for role, text in session["lines"]]


def questions_of(subject: dict[str, Any]) -> list[Question]:
    said = [text for s in subject["sessions"] for role, text in s["lines"] if role == "subject"]
    names = set(keyword_tokens(subject["name"]))
    out = []
    for q in subject["questions"]:
        holding = [s for s in said if q["answer"].lower() in s.lower()]
        words = set(keyword_tokens(q["text"])) - names
        shared = any(words & set(keyword_tokens(sentence)) for sentence in holding)
        out.append(
            Question(
                subject["id"],
                subject["part"],
                q["topic"],
                q["text"],
                q["answer"],
                q.get("stale"),
                paraphrase=not shared,
            )
        )
    return out


def foreign_values(subjects: Sequence[dict[str, Any]], own: str) -> list[str]:
    """Values said by other subjects only (budgets are left out: amounts may coincide)."""
    values = _owners(subjects)
    return [v for v, owners in values.items() if own not in owners]


def own_values(subjects: Sequence[dict[str, Any]], own: str) -> list[str]:
    """Values this subject said, longest first (budgets left out, as above)."""
    values = _owners(subjects)
    return sorted((v for v, owners in values.items() if own in owners), key=len, reverse=True)


def _owners(subjects: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
    values: dict[str, set[str]] = {}
    for subject in subjects:
        for q in subject["questions"]:
            if q["topic"] == "budget":
                continue
            for value in (q["answer"], q.get("stale")):
                if value:
                    values.setdefault(value.lower(), set()).add(subject["id"])
    return values


def holds_foreign(note: str, foreign: Sequence[str], own: Sequence[str]) -> bool:
    """A note names another subject's value: as whole words, outside this subject's values."""
    rest = note.lower()
    for value in own:
        rest = re.sub(rf"\b{re.escape(value)}\b", " ", rest)
    return any(re.search(rf"\b{re.escape(value)}\b", rest) for value in foreign)


async def ingest_subject(backend: MemoryBackend, ns: Namespace, subject: dict[str, Any]) -> None:
    for index, session in enumerate(subject["sessions"]):
        transcript = _transcript(session)
        await backend.ingest_transcript(
            ns,
            f"{subject['id']}-session-{index}",
            transcript,
            occurred_at=transcript[0].at or datetime.fromisoformat(session["at"]),
            metadata={"session_id": f"{subject['id']}-{index}", "interaction_number": index + 1},
            mode=IngestMode.INSTANT,
        )


async def current_notes(
    backend: MemoryBackend, ns: Namespace, text: str, *, threshold: float = RECALL_THRESHOLD
) -> list[SearchHit]:
    """What per-turn recall would show: the first three current facts of its wide query."""
    query = SearchQuery(text=text, threshold=threshold, limit=NOTES * 3, include_superseded=True)
    hits = await backend.search(ns, query)
    return [hit for hit in hits if hit.is_latest][:NOTES]


async def run_natural(
    backend: MemoryBackend,
    run_id: str,
    subjects: Sequence[dict[str, Any]],
    advance: Advance = no_progress,
) -> NaturalScores:
    scores = NaturalScores()
    for subject in subjects:
        ns = namespace(f"bench-{run_id}-natural-{subject['id']}")
        await ingest_subject(backend, ns, subject)
        foreign = foreign_values(subjects, subject["id"])
        own = own_values(subjects, subject["id"])
        for question in questions_of(subject):
            notes = [hit.text.lower() for hit in await current_notes(backend, ns, question.text)]
            _score(scores, question, notes, foreign, own)
            # Ranking alone: what a better-calibrated threshold could at most let through.
            ranked = await current_notes(backend, ns, question.text, threshold=0.0)
            answer = question.answer.lower()
            scores.parts[question.part].ranked_hits += any(answer in h.text.lower() for h in ranked)
            advance(1)
        await backend.drop_namespace(ns)
    return scores


def _score(
    scores: NaturalScores, q: Question, notes: list[str], foreign: list[str], own: list[str]
) -> None:
    tally = scores.parts[q.part]
    answer = q.answer.lower()
    hit = any(answer in note for note in notes)
    tally.asked += 1
    tally.notes += len(notes)
    tally.answering += sum(answer in note for note in notes)
    tally.hits += hit
    tally.paraphrases += q.paraphrase
    tally.paraphrase_hits += q.paraphrase and hit
    if q.stale is not None:
        stale = q.stale.lower()
        tally.stale_as_current += sum(stale in n and answer not in n for n in notes)
    tally.cross_subject += sum(holds_foreign(n, foreign, own) for n in notes)
    if not hit:
        scores.misses.append(f"{q.part} {q.subject} {q.topic}: {q.text}")
