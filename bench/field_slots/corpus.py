"""Labelled sentences from the training conversations (`cases-*.yaml` under a folder, CASES-FORMAT).

Each subject line is cut into sentences; a sentence holding the span of exactly one field's
proposal is labelled with that field, one holding none of the line's spans is labelled
"none" (it states no field), and one holding spans of two fields is left out (it speaks of
both, so it teaches neither). Samples carry their case id, for folds by case.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from factledger.adapters.field_reader.head import ALL_KINDS, NONE

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Sample:
    kind: str
    case: str
    text: str
    label: str  # a field, or NONE


@dataclass(frozen=True, slots=True)
class KindFields:
    fields: tuple[str, ...]
    many: frozenset[str]


def _sentences(line: str) -> list[str]:
    return [s for s in (p.strip() for p in _SENTENCE_END.split(line)) if s]


def _session_samples(kind: str, case: str, session: dict[str, Any]) -> Iterator[Sample]:
    lines = session.get("lines") or []
    spans: dict[int, list[tuple[str, str]]] = {}
    for proposal in (session.get("expect") or {}).get("proposals") or []:
        line, span = proposal.get("line"), proposal.get("span")
        if isinstance(line, int) and isinstance(span, str) and span:
            spans.setdefault(line, []).append((proposal["field"], span))
    for index, raw in enumerate(lines):
        if raw.get("role") != "subject" or not isinstance(raw.get("text"), str):
            continue
        for sentence in _sentences(raw["text"]):
            fields = {f for f, span in spans.get(index, []) if span in sentence}
            if len(fields) == 1:
                yield Sample(kind, case, sentence, fields.pop())
            elif not fields and not any(span in raw["text"] for _, span in spans.get(index, [])):
                yield Sample(kind, case, sentence, NONE)
            elif not fields:
                # A span across two sentences: the line states a field the cut lost.
                continue


def load(directory: Path) -> tuple[list[Sample], dict[str, KindFields]]:
    samples: list[Sample] = []
    kinds: dict[str, KindFields] = {}
    for path in sorted(directory.rglob("cases-*.yaml")):
        cases = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        for case in cases:
            kind = case["kind"]
            declared = case.get("fields")
            if declared and kind not in kinds:
                kinds[kind] = KindFields(
                    tuple(declared),
                    frozenset(
                        f for f, meaning in declared.items() if str(meaning).startswith("list:")
                    ),
                )
            for session in case.get("sessions") or []:
                samples.extend(_session_samples(kind, case["id"], session))
    return samples, kinds


def load_questions(directory: Path) -> tuple[list[Sample], dict[str, KindFields]]:
    """The sessions' questions (an agent's recall queries), each labelled with the field it
    asks about, or NONE when the writer gave none (a question about what the subject asked
    to forget, or about nothing the profile holds)."""
    _, kinds = load(directory)
    samples: list[Sample] = []
    for path in sorted(directory.rglob("cases-*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            for session in case.get("sessions") or []:
                for question in session.get("questions") or []:
                    text, field = question.get("text"), question.get("field")
                    if isinstance(text, str) and text.strip():
                        label = field if isinstance(field, str) and field else NONE
                        samples.append(Sample(case["kind"], case["id"], text.strip(), label))
    return samples, kinds


def load_topics(path: Path) -> tuple[list[Sample], dict[str, KindFields]]:
    """The asked-topic corpus (`bench/judgement/data/asked_topics.yaml`): questions and short
    notes, each labelled with the topic it speaks of (a slot name of the rule extractor or a
    kind of unslotted fact), "none" for neither. One kind, `ALL_KINDS`; each text is its own
    case for the folds."""
    topics: dict[str, dict[str, list[str]]] = yaml.safe_load(path.read_text(encoding="utf-8"))[
        "topics"
    ]
    samples = [
        Sample(ALL_KINDS, text, text, NONE if topic == "none" else topic)
        for topic, forms in topics.items()
        for texts in forms.values()
        for text in texts
    ]
    fields = tuple(topic for topic in topics if topic != "none")
    return samples, {ALL_KINDS: KindFields(fields, frozenset())}
