"""Hedges kept: a `stated` change must carry the hedges and conditions of the sentence it quotes.

The check reads the subject's whole sentence around the quote, so quoting "will buy next
quarter" out of "Maybe we will buy next quarter, if the budget is approved." does not hide
what made the statement tentative. The lexicon is small on purpose (every word in it is one a
reviewer would agree hedges a statement) and mirrors the rule extractor's guidance, so the
product's own proposals pass the check the callers' do:

- `CONDITION_MARKERS` open a clause the statement depends on ("if the pricing works",
  "depending on the budget", "next quarter at the earliest"). Every one the sentence holds
  must appear in the proposal's `condition`.
- `HEDGE_MARKERS` make a statement uncertain ("maybe", "might", "probably"). A sentence with
  hedges but no condition clause needs a `condition` holding at least one of them; one with
  a clause is carried by its clause (the extractor keeps the clause, not the adverb).

"if" after "as", "even", "see", "ask", "check", "wonder", "know", "sure" or "whether"
introduces a comparison or an embedded question, not a condition, and is not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

CONDITION_MARKERS: tuple[str, ...] = (
    "if",
    "unless",
    "depending on",
    "depends on",
    "as long as",
    "provided that",
    "assuming",
    "in case",
    "at the earliest",
    "at the latest",
)
HEDGE_MARKERS: tuple[str, ...] = (
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "might",
    "could",
    "not sure",
    "thinking about",
    "thinking of",
    "considering",
    "hopefully",
)

_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")
_NOT_A_CONDITION_BEFORE = re.compile(
    r"\b(?:as|even|see|ask|asked|wonder|wondering|check|know|knows|sure|unsure|whether)\s*$",
    re.IGNORECASE,
)


def _pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    words = "|".join(re.escape(m).replace(r"\ ", r"\s+") for m in sorted(markers, key=len)[::-1])
    return re.compile(rf"\b(?:{words})\b", re.IGNORECASE)


_CONDITIONS = _pattern(CONDITION_MARKERS)
_HEDGES = _pattern(HEDGE_MARKERS)


@dataclass(frozen=True, slots=True)
class Tentativeness:
    """The markers of one sentence, lower-case, in lexicon spelling."""

    conditions: tuple[str, ...]
    hedges: tuple[str, ...]

    @property
    def any(self) -> bool:
        return bool(self.conditions or self.hedges)


def _normal(marker: str) -> str:
    return " ".join(marker.lower().split())


def _conditions_in(text: str) -> Iterator[str]:
    for match in _CONDITIONS.finditer(text):
        word = _normal(match.group())
        if word == "if" and _NOT_A_CONDITION_BEFORE.search(text[: match.start()]):
            continue
        yield word


def markers_in(text: str) -> Tentativeness:
    """The condition and hedge markers `text` holds, each once, in order of appearance."""
    conditions = tuple(dict.fromkeys(_conditions_in(text)))
    hedges = tuple(dict.fromkeys(_normal(m.group()) for m in _HEDGES.finditer(text)))
    return Tentativeness(conditions, hedges)


def sentences_around(text: str, quote: str) -> str:
    """The whole sentences of `text` that any occurrence of `quote` touches, joined."""
    spans = [(m.start(), m.end()) for m in _SENTENCE.finditer(text)]
    touched: dict[int, None] = {}
    start = text.find(quote)
    while start >= 0:
        end = start + len(quote)
        for n, (s, e) in enumerate(spans):
            if s < end and start < e:
                touched[n] = None
        start = text.find(quote, start + 1)
    return " ".join(text[spans[n][0] : spans[n][1]].strip() for n in touched)


def dropped_markers(sentence: str, condition: str | None) -> tuple[str, ...]:
    """The markers of `sentence` the proposal's `condition` fails to carry (empty: all kept).

    Every condition clause must be carried; hedges alone need at least one carried.
    """
    said = markers_in(sentence)
    if not said.any:
        return ()
    kept = markers_in(condition or "")
    kept_words = set(kept.conditions) | set(kept.hedges)
    missing = tuple(c for c in said.conditions if c not in kept_words)
    if not said.conditions and not kept_words & set(said.hedges):
        missing = said.hedges
    return missing
