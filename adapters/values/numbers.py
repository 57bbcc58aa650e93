"""Numbers said in words or written in digits, in the languages `text2num` (MIT) knows.

- Words become digits in whichever of its languages reads the most of them ("sixty-eight",
  "soixante-huit", "sesenta y ocho").
- The word for "one" is also the indefinite article in every one of those languages but
  English: outside English a lone one is read only beside nothing ("een paar", "un par de"
  say no count), and beside other numbers a one said in words is an article ("uns 450 mil").
- Digits are read with their grouping ("1,250.50", "1.250,50", "1 250", "2'300") and scale
  ("450k", "2bn", "450 mil", which `text2num` writes "450 1000").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

# text2num's languages, English first: a tie goes to the earlier one.
NUMBER_LANGUAGES = ("en", "fr", "es", "de", "it", "pt", "nl")
_ONE_IS_A_COUNT = "en"  # the one language whose "one" is no article

_LETTERS = re.compile(r"\b[^\W\d_]+\b")  # words; an ordinal's "th" is part of its number
_BETWEEN_LETTERS = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_DIGITS = re.compile(r"\d+")
_A_ONE = re.compile(r"(?<![\d.,'\u2019])\b1\b(?![.,'\u2019]\d)")  # a one written in digits
# Digits as written: grouped by commas ("1,250.50"), by spaces or apostrophes ("1 250",
# "2'300"), by dots with a decimal comma ("1.250,50", "4,5"), or plain ("1250.5"); then a
# scale ("450k", "2bn") or the power of a thousand `text2num` writes ("1.2 1000000").
_NUMBER = re.compile(
    r"(?<![\w.,])(?:"
    r"(?P<comma_grouped>\d{1,3}(?:,\d{3})+(?:\.\d+)?)"
    r"|(?P<space_grouped>\d{1,3}(?:[ \u00a0\u202f'\u2019]\d{3})+(?:[.,]\d{1,2})?"
    r"(?![ \u00a0\u202f]?\d))"
    r"|(?P<dot_grouped>\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?|\d+,\d{1,2})"
    r"|(?P<plain>\d+(?:\.\d+)?)"
    r")(?![\d,.]\d)"
    r"(?:\s*(?P<scale>[kKmM]|bn|[mM]n)\b|\s+(?P<power>1000(?:000)*)\b)?"
)
_SCALES = {"k": 3, "m": 6, "mn": 6, "bn": 9}


@dataclass(frozen=True, slots=True)
class Reading:
    """Words with their numbers in digits: the language read in, and how many words it read."""

    text: str
    language: str | None
    words_read: int


@cache
def _text2num() -> Any:
    from text_to_num import alpha2digit

    return alpha2digit


def read_numbers(words: str, *, ones: bool = False) -> Reading:
    """`words` with the numbers said in words written in digits, in the language that reads
    the most words as numbers. A lone "one" or "two" stays a word beside other numbers
    ("40,000 for phase one"); `ones` reads every one as a number (a date's "first")."""
    text = _BETWEEN_LETTERS.sub(" ", words)
    reading = _most_read(text, threshold=0 if ones else 2)
    if not ones and not _DIGITS.search(reading.text):
        alone = _most_read(text, threshold=0)
        if alone.language == _ONE_IS_A_COUNT:  # "one bedroom", not "een paar"
            reading = alone
    if reading.text == text:
        return Reading(words, None, 0)
    return reading


def _most_read(text: str, threshold: int) -> Reading:
    alpha2digit = _text2num()
    before = len(_LETTERS.findall(text))
    best = Reading(text, None, 0)
    for language in NUMBER_LANGUAGES:
        read = alpha2digit(text, language, threshold=threshold)
        words_read = before - len(_LETTERS.findall(read))
        if words_read > best.words_read:
            best = Reading(read, language, words_read)
    return best


def numbers_in(text: str) -> list[Decimal]:
    """The numbers written in digits in `text`, scales applied ("450k", "1.2 1000000")."""
    return [number for number, _ in _counts(text)]


def _counts(text: str) -> list[tuple[Decimal, bool]]:
    """Each number in `text`, and whether it is a power of ten no count was written before
    ("1000000" alone, as `text2num` writes "a million" or "half a million")."""
    found: list[tuple[Decimal, bool]] = []
    for match in _NUMBER.finditer(text):
        if match["dot_grouped"]:
            digits = match["dot_grouped"].replace(".", "").replace(",", ".")
        elif match["space_grouped"]:
            digits = re.sub(r"[ \u00a0\u202f'\u2019]", "", match["space_grouped"]).replace(",", ".")
        else:
            digits = (match["comma_grouped"] or match["plain"]).replace(",", "")
        try:
            number = Decimal(digits)
        except InvalidOperation:
            continue
        if match["scale"]:
            number = number.scaleb(_SCALES[match["scale"].lower()])
        elif match["power"]:
            number *= Decimal(match["power"])
        whole_number = number == number.to_integral()
        bare = not match["scale"] and not match["power"] and _power_of_ten(number)
        found.append((number.quantize(Decimal(1)) if whole_number else number.normalize(), bare))
    return found


def _power_of_ten(number: Decimal) -> bool:
    return number >= 100 and number == Decimal(10) ** int(number.log10())


def one_number(words: str, reading: Reading | None = None) -> Decimal | None:
    """The one number `words` say, else None (two numbers, none, or a scale said alone);
    `reading`: `read_numbers(words)`, when the caller has it already."""
    reading = read_numbers(words) if reading is None else reading
    counts = set(_counts(reading.text))
    if len({n for n, _ in counts}) > 1 and not _A_ONE.search(words):
        counts = {(n, bare) for n, bare in counts if n != 1}  # "uns 450 mil": an article
    if len({number for number, _ in counts}) != 1:
        return None
    number, bare = counts.pop()
    if bare and reading.words_read < 2 and number not in numbers_in(words):
        # "half a million", "a few hundred": a scale said alone is no count ("one million",
        # two words read as one number, is)
        return None
    return number
