"""Hedges kept: a `stated` change must carry the hedge or condition of the sentence it quotes.

The check reads the subject's whole sentence around the quote, so quoting "will buy next
quarter" out of "Maybe we will buy next quarter, if the budget is approved." does not hide
what made the statement tentative. Whether a sentence is tentative (hedged, or resting on a
condition) is a judgement of language: the domain does not make it. Its caller passes a
`TentativeReader` (the application's learned reader); the domain only holds the rule that a
tentative sentence's stated change needs a `condition`.
"""

from __future__ import annotations

import re
from typing import Protocol

# A `.`, `!`, `?` or `;` ends a sentence only before a space, a line break or the end: the
# full stops inside "anna@example.com", "8.3.1" or "4.5m" end none (ADR 0180).
_SENTENCE = re.compile(r"(?:[^.!?;\n]|[.!?;](?!\s|$))+[.!?;]*")


class TentativeReader(Protocol):
    """Whether a sentence is tentative: hedged ("maybe", "might") or resting on a condition
    ("if the board signs off"), in whatever words or language it was said."""

    def __call__(self, sentence: str) -> bool: ...


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


def hedge_dropped(sentence: str, condition: str | None, tentative: TentativeReader) -> bool:
    """Whether a stated change quoting `sentence` drops its hedge: the sentence is tentative
    and the change carries no `condition`."""
    if condition is not None and condition.strip():
        return False
    return bool(sentence.strip()) and tentative(sentence)
