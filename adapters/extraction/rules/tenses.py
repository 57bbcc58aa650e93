"""Tenses put in the simple present before slot patterns see a clause.

"We're using X", "we've been buying from X", "I have lived in Y" and "we use X", "we buy from
X", "I live in Y" state the same current fact, so one pattern should serve all of them. Only
the verbs the slots are built on are rewritten, and only after "I" or "we": a progressive of
any other verb ("we are thinking about ...", "we are having issues with ...") keeps its own
meaning and its own patterns.
"""

from __future__ import annotations

import re

# -ing form -> base form, for the verbs that state a standing arrangement.
_PROGRESSIVE = {
    "using": "use",
    "working": "work",
    "buying": "buy",
    "ordering": "order",
    "sourcing": "source",
    "getting": "get",
    "shipping": "ship",
    "living": "live",
    "running": "run",
    "operating": "operate",
    "paying": "pay",
    "renting": "rent",
    "leasing": "lease",
    "banking": "bank",
    "hosting": "host",
    "purchasing": "purchase",
    "outsourcing": "outsource",
    "employing": "employ",
    "trading": "trade",
}
# Past participle -> base form, for "we have used X" (it still holds).
_PERFECT = {
    "used": "use",
    "worked": "work",
    "bought": "buy",
    "ordered": "order",
    "sourced": "source",
    "lived": "live",
    "operated": "operate",
    "shipped": "ship",
    "banked": "bank",
    "leased": "lease",
    "rented": "rent",
}
# Adverbs that sit between the auxiliary and the verb and add nothing a pattern needs ("now"
# still marks an update: update markers are read from the sentence, not from this text).
_ADVERBS = (
    r"(?:(?:currently|still|now|already|mostly|mainly|largely|primarily|also|really|actually|"
    r"just|since|recently|always|all|finally|eventually|basically|happily) )*"
)
_AUX_PROGRESSIVE = re.compile(
    rf"\b(I|we)\s+(?:am|are|was|were|have been|had been){' '}{_ADVERBS}"
    rf"({'|'.join(_PROGRESSIVE)})\b",
    re.IGNORECASE,
)
_AUX_PERFECT = re.compile(
    rf"\b(I|we)\s+(?:have|had)\s+{_ADVERBS}({'|'.join(_PERFECT)})\b", re.IGNORECASE
)
# "we have since gone over to X": the adverb hides the participle from the patterns.
_PERFECT_ADVERB = re.compile(rf"\b(I|we)\s+(have|had)\s+{_ADVERBS}(?=\w+ed\b|gone\b)", re.I)
_HAVE_GOT = re.compile(r"\b(I|we)\s+have\s+got\b", re.IGNORECASE)


def simple_present(text: str) -> str:
    """ "We are still using X" -> "We use X"; "I have been living in Y" -> "I live in Y";
    "we have got 45 people" -> "we have 45 people". Contractions must be expanded first."""
    text = _AUX_PROGRESSIVE.sub(lambda m: f"{m.group(1)} {_base(m.group(2), _PROGRESSIVE)}", text)
    text = _AUX_PERFECT.sub(lambda m: f"{m.group(1)} {_base(m.group(2), _PERFECT)}", text)
    text = _PERFECT_ADVERB.sub(lambda m: f"{m.group(1)} {m.group(2)} ", text)
    return _HAVE_GOT.sub(lambda m: f"{m.group(1)} have", text)


def _base(word: str, forms: dict[str, str]) -> str:
    return forms[word.lower()]
