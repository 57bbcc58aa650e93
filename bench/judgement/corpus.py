"""A judgement corpus: `sentences.yaml` (and `sentences-*.yaml`, more groups in the same
format) and `answers.yaml` (see `data/README.md`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from factledger.bench.evalsets.cases import load_answers

PACKAGED_CORPUS = Path(__file__).parent / "data"
STATEMENTS = ("self", "third_party", "small_talk", "question")
REPLIES = ("yes", "no", "neither")


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    statement: str
    hedged: bool
    forget: bool
    correction: bool


@dataclass(frozen=True, slots=True)
class LabelledReply:
    reply: str
    label: str


@dataclass(frozen=True, slots=True)
class Corpus:
    sentences: tuple[Sentence, ...]
    replies: tuple[LabelledReply, ...]

    def __add__(self, other: Corpus) -> Corpus:
        return Corpus(self.sentences + other.sentences, self.replies + other.replies)


def _groups(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return list(yaml.safe_load(path.read_text(encoding="utf-8")) or [])


def _label(raw: object) -> str:
    if isinstance(raw, bool):  # YAML 1.1 reads a bare yes / no as a boolean
        return "yes" if raw else "no"
    return str(raw)


def load_corpus(directory: Path) -> Corpus:
    sentences = []
    files = [directory / "sentences.yaml", *sorted(directory.glob("sentences-*.yaml"))]
    for path, group in ((p, g) for p in files for g in _groups(p)):
        labels = group.get("labels") or {}
        statement = str(labels.get("statement", "self"))
        if statement not in STATEMENTS:
            raise ValueError(f"{path.name}: statement must be one of {STATEMENTS}")
        flags = (bool(labels.get(f, False)) for f in ("hedged", "forget", "correction"))
        hedged, forget, correction = flags
        sentences += [
            Sentence(str(text), statement, hedged, forget, correction) for text in group["texts"]
        ]
    replies = []
    for group in _groups(directory / "answers.yaml"):
        label = _label(group["label"])
        if label not in REPLIES:
            raise ValueError(f"answers.yaml: label must be one of {REPLIES}")
        replies += [LabelledReply(str(r), label) for r in group["replies"]]
    replies += [LabelledReply(a.reply, a.label) for a in load_answers(directory)]
    return Corpus(tuple(sentences), tuple(replies))
