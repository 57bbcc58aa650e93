"""Labelled training conversations (`cases-*.yaml` in the training format: each proposal,
thing not to propose and forget request names its subject line and the exact words, `span`,
that state it; each question names the field it asks about).

Loading validates as it reads: a span not found in its line (or a line index that is not a
subject line) is dropped and counted, so one writer's slip costs that label, not the file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from factledger.bench.judgement.corpus import Corpus, Sentence, load_corpus

LIST_MARK = "list:"
CONVERSATIONS = "conversations"
# The cut the shipped sentence heads were trained on, kept so that their training command
# remakes them; the product cuts with `application/sentences.py` since ADR 0176, which the
# dev halves measured the heads reading as well.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_STATEMENTS_OF_WHY = {
    "third_party": "third_party",
    "small_talk": "small_talk",
    "question": "question",
}  # a corpus directory's folder of training conversations


@dataclass(frozen=True, slots=True)
class Span:
    """Words of one subject line: `line` its index in the session, `text` copied from it."""

    line: int
    text: str
    field: str | None
    start: int  # character offset of `text` in its line


@dataclass(frozen=True, slots=True)
class Proposal:
    span: Span
    value: str
    origin: str  # stated | inferred
    hedged: bool
    correction: bool
    updates: str | None
    condition: str | None


@dataclass(frozen=True, slots=True)
class NotProposed:
    span: Span
    why: str  # third_party | small_talk | agent_said | question | hypothetical | negated | joke


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    text: str
    field: str | None


@dataclass(frozen=True, slots=True)
class TrainingSession:
    lines: tuple[tuple[str, str], ...]  # (role, text)
    proposals: tuple[Proposal, ...]
    not_proposed: tuple[NotProposed, ...]
    forgets: tuple[Span, ...]
    questions: tuple[AskedQuestion, ...]


@dataclass(frozen=True, slots=True)
class TrainingCase:
    id: str
    domain: str
    kind: str
    fields: Mapping[str, str]  # name -> the writer's one-line meaning ("list: ..." for lists)
    tags: tuple[str, ...]
    sessions: tuple[TrainingSession, ...]

    def is_list(self, name: str) -> bool:
        return self.fields.get(name, "").strip().lower().startswith(LIST_MARK)


@dataclass(slots=True)
class Loaded:
    """What a directory gave: its cases, and what was dropped, by reason."""

    cases: list[TrainingCase] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    unreadable: list[str] = field(default_factory=list)


def _span(
    raw: Mapping[str, Any], lines: Sequence[tuple[str, str]], loaded: Loaded, what: str
) -> Span | None:
    try:
        index = int(raw["line"])
        words = str(raw["span"])
    except (KeyError, TypeError, ValueError):
        loaded.dropped[f"{what}: no line or span"] += 1
        return None
    if not 0 <= index < len(lines):
        loaded.dropped[f"{what}: line out of range"] += 1
        return None
    role, text = lines[index]
    start = text.find(words) if words else -1
    if start < 0:
        loaded.dropped[f"{what}: span not in its line"] += 1
        return None
    if role != "subject" and what != "not_proposed":
        loaded.dropped[f"{what}: not a subject line"] += 1
        return None
    named = raw.get("field")
    return Span(index, words, None if named is None else str(named), start)


def _session(raw: Mapping[str, Any], fields: Mapping[str, str], loaded: Loaded) -> TrainingSession:
    lines = tuple((str(x["role"]), str(x["text"])) for x in raw.get("lines") or ())
    expect = raw.get("expect") or {}
    proposals = []
    for p in expect.get("proposals") or ():
        span = _span(p, lines, loaded, "proposal")
        if span is None:
            continue
        if span.field not in fields:
            loaded.dropped["proposal: field not in the domain's fields"] += 1
            continue
        proposals.append(
            Proposal(
                span=span,
                value=str(p.get("value", span.text)),
                origin=str(p.get("origin", "stated")),
                hedged=bool(p.get("hedged", False)),
                correction=bool(p.get("correction", False)),
                updates=None if p.get("updates") is None else str(p["updates"]),
                condition=None if p.get("condition") is None else str(p["condition"]),
            )
        )
    not_proposed = []
    for n in expect.get("not_proposed") or ():
        span = _span(n, lines, loaded, "not_proposed")
        if span is not None:
            not_proposed.append(NotProposed(span, str(n.get("why", ""))))
    forgets = [
        s
        for f in expect.get("forget_requests") or ()
        if (s := _span(f, lines, loaded, "forget_request")) is not None
    ]
    questions = [
        AskedQuestion(str(q["text"]), None if q.get("field") is None else str(q["field"]))
        for q in raw.get("questions") or ()
        if q.get("text")
    ]
    return TrainingSession(
        lines, tuple(proposals), tuple(not_proposed), tuple(forgets), tuple(questions)
    )


def read_cases_file(path: Path) -> list[Mapping[str, Any]] | None:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return list(raw) if isinstance(raw, list) else None


def load_training_cases(directories: Sequence[Path]) -> Loaded:
    """Every `cases-*.yaml` of `directories` (searched recursively), validated; a domain's
    fields come from the first case of a file that names them."""
    loaded = Loaded()
    fields_of: dict[str, dict[str, str]] = {}
    for directory in directories:
        for path in sorted(directory.rglob("cases-*.yaml")):
            raw = read_cases_file(path)
            if raw is None:
                loaded.unreadable.append(path.name)
                continue
            for c in raw:
                domain = str(c.get("domain", ""))
                if isinstance(c.get("fields"), Mapping):
                    fields_of[domain] = {str(k): str(v) for k, v in c["fields"].items()}
                fields = fields_of.get(domain)
                if not fields or not c.get("sessions"):
                    loaded.dropped["case: no fields known for its domain"] += 1
                    continue
                try:
                    sessions = tuple(_session(s, fields, loaded) for s in c["sessions"])
                except (KeyError, TypeError, AttributeError):
                    loaded.dropped["case: malformed session"] += 1
                    continue
                loaded.cases.append(
                    TrainingCase(
                        id=str(c.get("id", "")),
                        domain=domain,
                        kind=str(c.get("kind") or domain),
                        fields=fields,
                        tags=tuple(str(t) for t in c.get("tags") or ()),
                        sessions=sessions,
                    )
                )
    return loaded


def sentence_around(text: str, at: int) -> str:
    starts = [0, *(m.end() for m in _SENTENCE_END.finditer(text))]
    begin = max(s for s in starts if s <= at)
    following = [s for s in starts if s > at]
    return text[begin : following[0] if following else len(text)].strip()


def sentences_of_conversations(cases: Sequence[TrainingCase]) -> Corpus:
    """The sentence heads' examples the conversations' labels give: the sentence around a
    stated proposal's span is about the subject (hedged, a correction as labelled), around a
    forget request's a request to forget, around a third party's fact, small talk or a
    question what it is. A sentence given two different readings is left out."""
    read: dict[str, Sentence | None] = {}

    def add(text: str, sentence: Sentence) -> None:
        if text in read and read[text] != sentence:
            read[text] = None
        else:
            read.setdefault(text, sentence)

    for case in cases:
        for session in case.sessions:
            for p in session.proposals:
                if p.origin == "stated":
                    text = sentence_around(session.lines[p.span.line][1], p.span.start)
                    add(text, Sentence(text, "self", p.hedged, False, p.correction))
            for f in session.forgets:
                text = sentence_around(session.lines[f.line][1], f.start)
                add(text, Sentence(text, "self", False, True, False))
            for n in session.not_proposed:
                role, line = session.lines[n.span.line]
                if role == "subject" and n.why in _STATEMENTS_OF_WHY:
                    text = sentence_around(line, n.span.start)
                    add(text, Sentence(text, _STATEMENTS_OF_WHY[n.why], False, False, False))
    return Corpus(tuple(s for s in read.values() if s is not None), ())


def labelled(corpora: Sequence[Path]) -> tuple[Corpus, Loaded]:
    """The corpora's sentences and replies, with the sentences their training conversations'
    labels give; and those conversations."""
    corpus = Corpus((), ())
    for directory in corpora:
        corpus = corpus + load_corpus(directory)
    loaded = load_training_cases([d / CONVERSATIONS for d in corpora])
    return corpus + sentences_of_conversations(loaded.cases), loaded
