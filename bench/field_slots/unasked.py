"""Words that name nothing a fact holds, fitted from the labelled training conversations.

A word a question or a stated sentence uses whatever field it is about, and that almost never
falls in a value or a field's name ("now", "currently", "still", "already"), tells no fact
apart: in a query it only dilutes the words that name the answer. The conversations
(CASES-FORMAT) label the field of every question and stated sentence and the words of every
value, so such words can be counted rather than listed. ADR 0108 measured the fitted set in
place of the hand-written words of when; since ADR 0118 memories' and queries' keywords leave
out the fitted words (`application/memory/unasked_words.py`), which `--write` puts in the
product's data file (pin the SHA-256 it prints there):

    python -m factledger.bench.field_slots fit-unasked --write [--min-fields 30 --max-share 0.02]
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from lemminflect import getAllLemmas

from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.scoring import keyword_tokens

MIN_FIELDS = 30
MAX_VALUE_SHARE = 0.02
MIN_LENGTH = 3  # "s", "m", "ve": what an apostrophe leaves is no word
# Only a word `lemminflect`'s lexicon can read as an adverb ("now", "still", "currently"):
# verbs and nouns said with every field still name what a fact holds when a question and
# the sentence that answers it share them ("What does she take for her chest?" and "I take
# salbutamol"; "What tools does he know?"), and cost the blind dev halves three right notes
# (ADR 0118); greetings and thanks are words like any other since ADR 0108.
ADVERB = "ADV"
NO_FIELD = "-"


@dataclass(slots=True)
class WordSpread:
    """How one word is used across the corpus: the fields of the texts that use it, how many
    uses, how many values or answer words hold it, and whether a field's name does."""

    fields: Counter[str] = field(default_factory=Counter)
    in_value: int = 0
    named: bool = False

    @property
    def uses(self) -> int:
        return sum(self.fields.values())


def _words(text: str) -> set[str]:
    """A text's words as memories' keywords fold them, before any word is left out for
    naming nothing."""
    return {fold_inflection(t) for t in keyword_tokens(text.lower())}


def _used(session: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, text) for each question and each proposal's stated line of a session."""
    lines = session.get("lines") or []
    for question in session.get("questions") or []:
        if isinstance(question.get("text"), str):
            yield question.get("field") or NO_FIELD, question["text"]
    for proposal in (session.get("expect") or {}).get("proposals") or []:
        line = proposal.get("line")
        if isinstance(line, int) and 0 <= line < len(lines):
            yield proposal["field"], str(lines[line].get("text", ""))


def _values(session: dict[str, Any]) -> Iterator[str]:
    """The texts that name what a fact holds: values and the answers' words."""
    for proposal in (session.get("expect") or {}).get("proposals") or []:
        yield str(proposal.get("value", ""))
    for question in session.get("questions") or []:
        yield from (str(k) for k in question.get("answer_keywords") or [])


def word_spread(cases: Iterable[dict[str, Any]]) -> dict[str, WordSpread]:
    """Each word's spread over the cases' fields and values."""
    spread: dict[str, WordSpread] = {}
    named: set[str] = set()
    value_uses: Counter[str] = Counter()
    for case in cases:
        for name in case.get("fields") or {}:
            named |= _words(name.replace("_", " "))
        for session in case.get("sessions") or []:
            for field_name, text in _used(session):
                for word in _words(text):
                    spread.setdefault(word, WordSpread()).fields[field_name] += 1
            for text in _values(session):
                value_uses.update(_words(text))
    for word, seen in spread.items():
        seen.in_value = value_uses[word]
        seen.named = word in named
    return spread


def unasked_words(
    spread: dict[str, WordSpread],
    min_fields: int = MIN_FIELDS,
    max_value_share: float = MAX_VALUE_SHARE,
) -> list[str]:
    """The words used with at least `min_fields` fields, held by no field's name ("budget"
    names what a fact holds), at most `max_value_share` of whose uses a value holds, that the
    lemmatiser's lexicon can read as an adverb (`ADVERB`)."""
    return sorted(
        w
        for w, seen in spread.items()
        if len(seen.fields) >= min_fields
        and not seen.named
        and seen.in_value <= max_value_share * seen.uses
        and w.isalpha()
        and len(w) >= MIN_LENGTH
        and ADVERB in getAllLemmas(w)
    )


def load_cases(directory: Path) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in sorted(directory.rglob("cases-*.yaml")):
        cases.extend(yaml.safe_load(path.read_text(encoding="utf-8")) or [])
    return cases


def write_unasked_words(fitted: dict[str, object], path: Path) -> str:
    """Writes the fitted words (`fit_unasked`'s result) where the product reads them; returns
    the file's SHA-256, to pin in `application/memory/unasked_words.py`."""
    data = json.dumps(fitted, indent=1, sort_keys=True) + "\n"
    path.write_text(data, encoding="utf-8")
    return hashlib.sha256(data.encode("utf-8")).hexdigest()
