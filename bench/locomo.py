"""LoCoMo loading and the dataset README's evidence normalisation (1,536 scored questions).

The data is read from a path given on the command line and never copied into the project.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCORED_CATEGORIES = (1, 2, 3, 4)
# Retrieval changes are chosen on conversations 1-6 and checked on 7-10 (ADR 0026, 0039).
DEVELOPMENT_CONVERSATIONS = 6
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SESSION_KEY = re.compile(r"^session_(\d+)$")
EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str  # the README's item text: "<speaker>: <text>" plus the image caption
    raw_text: str  # the turn's own words, plus the caption; what a speaker said
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class Question:
    index: int  # position in the conversation's `qa` list
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[tuple[Turn, ...], ...]  # in chronological order
    questions: tuple[Question, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(turn for session in self.sessions for turn in session)


def normalise_evidence(raw: list[str], known: set[str]) -> frozenset[str]:
    """Applies the README's recipe: strip parentheses, split, fix forms, drop unknown ids."""
    ids: set[str] = set()
    for entry in raw:
        for token in re.split(r"[;,\s]+", entry.replace("(", "").replace(")", "")):
            match = EVIDENCE_ID.fullmatch(token)
            if match is None:
                continue
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id in known:
                ids.add(dia_id)
    return frozenset(ids)


def _turn(raw: dict[str, Any], session: int, at: datetime) -> Turn:
    own = str(raw["text"])
    caption = raw.get("blip_caption")
    if caption:
        own = f"{own} [shares image: {caption}]"
    speaker = str(raw["speaker"])
    return Turn(str(raw["dia_id"]), session, speaker, f"{speaker}: {own}", own, at)


def _sessions(conversation: dict[str, Any]) -> tuple[tuple[Turn, ...], ...]:
    numbers = sorted(
        int(match.group(1)) for key in conversation if (match := SESSION_KEY.fullmatch(key))
    )
    sessions = []
    for number in numbers:
        # The dataset gives no zone; UTC is our choice, so the times stay comparable.
        raw_at = conversation[f"session_{number}_date_time"]
        at = datetime.strptime(raw_at, DATE_FORMAT).replace(tzinfo=UTC)
        sessions.append(tuple(_turn(raw, number, at) for raw in conversation[f"session_{number}"]))
    return tuple(sessions)


def _questions(raw_qa: list[dict[str, Any]], known: set[str]) -> tuple[Question, ...]:
    questions = []
    for index, raw in enumerate(raw_qa):
        category = int(raw["category"])
        if category not in SCORED_CATEGORIES:
            continue
        evidence = normalise_evidence([str(e) for e in raw.get("evidence", [])], known)
        if evidence:  # four category-3 questions are left with none and are dropped
            questions.append(Question(index, str(raw["question"]), category, evidence))
    return tuple(questions)


def parse_conversation(raw: dict[str, Any]) -> Conversation:
    """One conversation of `locomo10.json`, with its scored questions."""
    body = raw["conversation"]
    sessions = _sessions(body)
    known = {turn.dia_id for session in sessions for turn in session}
    speakers = (str(body["speaker_a"]), str(body["speaker_b"]))
    return Conversation(str(raw["sample_id"]), speakers, sessions, _questions(raw["qa"], known))


def load_locomo(path: Path) -> list[Conversation]:
    """Every conversation of the file, in file order."""
    with path.open(encoding="utf-8") as handle:
        raw = json.load(handle)
    return [parse_conversation(item) for item in raw]
