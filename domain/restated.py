"""Whether a reason restates the words it forgets.

A forget's or an erasure's reason is recorded (sealed under the subject's key until erasure),
so "forget that my budget is 40k" would keep, in the reason, what the forget takes out of
everything else. Such a reason is refused (the caller re-words it) rather than recorded with
words cut out of it: a ledger that silently edits what a caller wrote would record a reason
nobody gave.

Texts are compared normalised: case folded, punctuation dropped, and numbers written the ways
people write amounts ("40k", "40,000", "40 000" is not joined: it reads as two numbers) read as
one number. A reason restates the words when it holds a number of theirs, two of their words
in a row, or the whole of a value of one or two words; the words too common to tell one
sentence from another ("my", "is") are left out of both. Which words those are is the
caller's to say (`common`: the application passes its stopword library's function words,
ADR 0108); the domain holds no word list, and without one every word counts. Naming the field
("forget my budget") restates nothing.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Collection, Iterable
from decimal import Decimal, InvalidOperation

from factledger.domain.errors import ReasonRestatesError

RESTATES_RULE = "must not restate what it forgets: say why, not what"
_TOKEN = re.compile(r"\d[\d,.]*\d[kKmM]?\b|\d[kKmM]?\b|[^\W\d_]+")
_SCALE = {"k": Decimal(1000), "m": Decimal(1_000_000)}


def _number(token: str) -> str | None:
    """A number token as one canonical form ("40k", "40,000" and "40000" alike)."""
    scale = _SCALE.get(token[-1].lower(), Decimal(1)) if token[-1].isalpha() else Decimal(1)
    digits = token.rstrip("kKmM")
    digits = digits.replace(",", "")  # thousands: "40,000", "1,234.5"
    try:
        value = Decimal(digits) * scale
    except InvalidOperation:
        return None
    return format(value.normalize(), "f")


def words_of(text: str, common: Collection[str] = frozenset()) -> list[str]:
    """The text's words, normalised, less the `common` ones; numbers in their canonical
    form."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    words = []
    for token in _TOKEN.findall(folded):
        if token[0].isdigit():
            number = _number(token)
            if number is not None:
                words.append(number)
        elif token not in common:
            words.append(token)
    return words


def restates(reason: str, forgotten: Iterable[str], common: Collection[str] = frozenset()) -> bool:
    """Whether `reason` holds a number, two consecutive words, or a whole short value of any
    of the `forgotten` texts, the `common` words left out of both."""
    said = words_of(reason, common)
    if not said:
        return False
    said_set = set(said)
    said_pairs = set(itertools.pairwise(said))
    for text in forgotten:
        words = words_of(text, common)
        if not words:
            continue
        if any(w[0].isdigit() and w in said_set for w in words):
            return True
        if len(words) <= 2 and all(w in said_set for w in words):
            return True
        if said_pairs & set(itertools.pairwise(words)):
            return True
    return False


def check_not_restated(
    reason: str, forgotten: Iterable[str], common: Collection[str] = frozenset()
) -> None:
    """Refuses a reason that restates the forgotten words (names the field, never the words)."""
    if restates(reason, forgotten, common):
        raise ReasonRestatesError(f"reason: {RESTATES_RULE}")
