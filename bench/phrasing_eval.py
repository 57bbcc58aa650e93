"""Scores an `Extractor` on how things are said (`tests/data/phrasing_set.yaml`): tenses,
contractions, indirect statements, small talk, requests about memory itself, fragments, the
shape of notes, and reasons given after the change they explain.

- A slot fact matches an expected one when its slot fits (the same, or a key of it:
  "complaint" fits "complaint:late_parcels") and the expected value occurs in its value or
  note; a plain note (slot null) matches when it holds every expected word. One-to-one.
- An expected update must come back as `updates`.
- A quiet message (small talk, a request about memory, a fragment) passes when no fact cites
  it alone among the subject's messages.
- A later reason passes when an `extends` fact names the fact of its slot and its note holds
  every expected phrase ("previously Swiftwing Post", "missing").
- Every stated note is checked on its own: no first-person pronoun, no "the subject", no
  filler word, not the subject's sentence with its pronouns swapped, at most 16 words
  (date annotations in parentheses not counted). The lexicons here are the scorer's own, so
  an extractor cannot pass by sharing them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from factledger.application.errors import MemoryBackendError
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, KnownFact
from factledger.application.memory.ports import Extractor
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

OCCURRED_AT = datetime(2026, 11, 16, 15, 0, tzinfo=UTC)
MAX_NOTE_WORDS = 16
_COPY_SHARE = 0.8  # a note keeping this share of a long sentence's words is that sentence
_COPY_MIN_WORDS = 8
_FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll)\b|\b(?:me|my|mine|myself|we|we're|we've|us|our|ours|ourselves)\b"
    r"|\bthe subject\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"\b(?:honestly|basically|literally|actually|kind of|sort of|you know|i mean|to be fair|"
    r"to be honest|pretty much|so yeah|anyway|um+|uh+|i think|i guess|i suppose)\b",
    re.IGNORECASE,
)
# Pronouns and the verbs that follow them change when a sentence is swapped to the third
# person; a copy is judged on the other words.
_PRONOUNS = frozenset(
    {"i", "me", "my", "mine", "we", "us", "our", "ours", "the", "subject", "they", "them"}
    | {"their", "theirs", "is", "are", "am", "has", "have"}
)
_ANNOTATION = re.compile(r"\([^)]*\)")


@dataclass(frozen=True, slots=True)
class ExpectedSlot:
    slot: str | None
    value: str | None = None
    has: tuple[str, ...] = ()
    updates: bool = False


@dataclass(frozen=True, slots=True)
class ExpectedReason:
    slot: str
    has: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PhrasingCase:
    id: str
    tags: tuple[str, ...]
    request: ExtractionRequest
    facts: tuple[ExpectedSlot, ...]
    quiet: tuple[int, ...]
    reason: ExpectedReason | None


@dataclass(frozen=True, slots=True)
class PhrasingResult:
    case: PhrasingCase
    facts: tuple[ExtractedFact, ...]
    missed: tuple[ExpectedSlot, ...]
    not_updated: tuple[ExpectedSlot, ...]
    quiet_kept: int
    reason_linked: bool
    bad_notes: tuple[tuple[str, str], ...]  # (fact key, what is wrong)
    wrong_slots: int
    seconds: float
    failed: bool = False  # the extractor raised instead of answering

    @property
    def problems(self) -> list[str]:
        said = [f"missed {e.slot}: {e.value or ', '.join(e.has)}" for e in self.missed]
        said += [f"not an update: {e.slot}" for e in self.not_updated]
        if self.quiet_kept < len(self.case.quiet):
            said.append("stored a quiet message")
        if self.case.reason is not None and not self.reason_linked:
            said.append(f"reason not linked to {self.case.reason.slot}")
        said += [f"note {key}: {why}" for key, why in self.bad_notes]
        said += ["a fact of an unexpected slot"] * self.wrong_slots
        said += ["the extractor failed"] * self.failed
        return said

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def updated(self) -> int:
        return sum(e.updates for e in self.case.facts) - len(self.not_updated)


@dataclass(frozen=True, slots=True)
class PhrasingScores:
    results: tuple[PhrasingResult, ...] = field(default=())

    def _ratio(self, hits: int, total: int) -> str:
        return f"{hits / total if total else 1.0:.2f} ({hits}/{total})"

    def lines(self, name: str) -> list[str]:
        r = self.results
        notes = sum(len([f for f in x.facts if not f.is_inference]) for x in r)
        bad = sum(len({k for k, _ in x.bad_notes}) for x in r)
        seconds = sum(x.seconds for x in r) / len(r) if r else 0.0
        return [
            f"{name}: cases {self._ratio(sum(x.passed for x in r), len(r))}",
            f"  slot facts found   {self._ratio(*self._found(slotted=True))}",
            f"  plain notes found  {self._ratio(*self._found(slotted=False))}",
            "  updates marked     "
            + self._ratio(
                sum(x.updated for x in r), sum(1 for x in r for e in x.case.facts if e.updates)
            ),
            "  quiet kept quiet   "
            + self._ratio(sum(x.quiet_kept for x in r), sum(len(x.case.quiet) for x in r)),
            "  reasons linked     "
            + self._ratio(
                sum(x.reason_linked for x in r), sum(x.case.reason is not None for x in r)
            ),
            f"  notes well formed  {self._ratio(notes - bad, notes)}",
            f"  unexpected slots   {sum(x.wrong_slots for x in r)}",
            f"  extractor errors   {sum(x.failed for x in r)}",
            f"  seconds per session {seconds:.4f}",
        ]

    def _found(self, *, slotted: bool) -> tuple[int, int]:
        def counted(e: ExpectedSlot) -> bool:
            return (e.slot is None) != slotted

        wanted = sum(counted(e) for x in self.results for e in x.case.facts)
        missed = sum(counted(e) for x in self.results for e in x.missed)
        return wanted - missed, wanted

    def part(self, *, heldout: bool) -> PhrasingScores:
        return PhrasingScores(
            tuple(r for r in self.results if ("heldout" in r.case.tags) is heldout)
        )


def parse_cases(raw: Sequence[Mapping[str, Any]]) -> list[PhrasingCase]:
    return [_parse(doc) for doc in raw]


async def evaluate(extractor: Extractor, cases: Sequence[PhrasingCase]) -> PhrasingScores:
    results = []
    for case in cases:
        started = time.perf_counter()
        try:
            facts = await extractor.extract(case.request)
        except MemoryBackendError:
            # A model that answers out of shape has extracted nothing for the case; the run
            # goes on so its other cases are scored.
            results.append(score_case(case, [], time.perf_counter() - started, failed=True))
            continue
        results.append(score_case(case, facts, time.perf_counter() - started))
    return PhrasingScores(tuple(results))


def score_case(
    case: PhrasingCase,
    facts: Sequence[ExtractedFact],
    seconds: float = 0.0,
    *,
    failed: bool = False,
) -> PhrasingResult:
    left = [f for f in facts if not f.is_inference]
    pairs: list[tuple[ExpectedSlot, ExtractedFact]] = []
    missed: list[ExpectedSlot] = []
    for expected in case.facts:
        hit = next((f for f in left if _matches(expected, f)), None)
        if hit is None:
            missed.append(expected)
        else:
            pairs.append((expected, hit))
            left.remove(hit)
    expected_slots = {e.slot for e in case.facts if e.slot}
    return PhrasingResult(
        case=case,
        facts=tuple(facts),
        missed=tuple(missed),
        not_updated=tuple(e for e in case.facts if e.updates and not _updated(e, pairs)),
        quiet_kept=sum(not _cites_only(facts, case, i) for i in case.quiet),
        reason_linked=_reason_linked(case.reason, pairs, facts),
        bad_notes=tuple(
            (f.key, why)
            for f in facts
            if not f.is_inference
            for why in note_problems(f.text, _said(case, f))
        ),
        wrong_slots=sum(
            1
            for f in left
            if f.slot
            and f.relation is not RelationKind.EXTENDS
            and not any(f.slot == s or f.slot.startswith(f"{s}:") for s in expected_slots)
        ),
        seconds=seconds,
        failed=failed,
    )


def note_problems(note: str, said: Sequence[str]) -> list[str]:
    """What is wrong with a note, judged against the subject's sentences it came from."""
    problems = []
    bare = _ANNOTATION.sub("", note)
    if _FIRST_PERSON.search(bare):
        problems.append("first person or 'the subject'")
    if _FILLER.search(bare):
        problems.append("filler word")
    if len(_words(bare)) > MAX_NOTE_WORDS:
        problems.append("too long")
    if any(_is_copy(bare, sentence) for text in said for sentence in _sentences(text)):
        problems.append("the subject's sentence, pronouns swapped")
    return problems


def _matches(expected: ExpectedSlot, fact: ExtractedFact) -> bool:
    if expected.slot is None:
        if fact.slot is not None and not fact.slot.startswith("intent"):
            return False
    else:
        slot = fact.slot or ""
        if slot != expected.slot and not slot.startswith(expected.slot + ":"):
            return False
    seen = f"{fact.value or ''} {fact.text}".lower()
    wanted = ([expected.value] if expected.value else []) + list(expected.has)
    return all(w.lower() in seen for w in wanted)


def _updated(expected: ExpectedSlot, pairs: Sequence[tuple[ExpectedSlot, ExtractedFact]]) -> bool:
    return any(e is expected and f.relation is RelationKind.UPDATES for e, f in pairs)


def _cites_only(facts: Sequence[ExtractedFact], case: PhrasingCase, index: int) -> bool:
    subject = {i for i, m in enumerate(case.request.transcript) if m.role is Role.SUBJECT}
    return any(set(f.source_indexes) & subject == {index} for f in facts)


def _reason_linked(
    reason: ExpectedReason | None,
    pairs: Sequence[tuple[ExpectedSlot, ExtractedFact]],
    facts: Sequence[ExtractedFact],
) -> bool:
    if reason is None:
        return False
    changes = [f.key for e, f in pairs if e.slot == reason.slot]
    return any(
        f.relation is RelationKind.EXTENDS
        and set(f.related_to) & set(changes)
        and all(h.lower() in f.text.lower() for h in reason.has)
        for f in facts
    )


def _said(case: PhrasingCase, fact: ExtractedFact) -> list[str]:
    transcript = case.request.transcript
    return [
        transcript[i].text
        for i in fact.source_indexes
        if 0 <= i < len(transcript) and transcript[i].role is Role.SUBJECT
    ]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def _is_copy(note: str, sentence: str) -> bool:
    words = [w for w in _words(sentence) if w not in _PRONOUNS]
    if len(_words(sentence)) < _COPY_MIN_WORDS or not words:
        return False
    kept = set(_words(note))
    return sum(w in kept for w in words) / len(words) >= _COPY_SHARE


def _parse(doc: Mapping[str, Any]) -> PhrasingCase:
    transcript = [
        Message(Role(role), str(text)) for line in doc["messages"] for role, text in line.items()
    ]
    known = [KnownFact(str(k["id"]), str(k["text"]), k.get("slot")) for k in doc.get("known", [])]
    reason = doc.get("reason")
    return PhrasingCase(
        id=str(doc["id"]),
        tags=tuple(doc.get("tags", ())),
        request=ExtractionRequest(transcript, OCCURRED_AT, known),
        facts=tuple(
            ExpectedSlot(
                slot=e.get("slot"),
                value=None if e.get("value") is None else str(e["value"]),
                has=tuple(str(h) for h in e.get("has", ())),
                updates=bool(e.get("updates", False)),
            )
            for e in doc.get("facts", ())
        ),
        quiet=tuple(int(i) for i in doc.get("quiet", ())),
        reason=None
        if reason is None
        else ExpectedReason(str(reason["slot"]), tuple(str(h) for h in reason["has"])),
    )
