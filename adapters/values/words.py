"""Numbers, amounts and dates from words, in the languages the number reader knows.

- Numbers said in words become digits by `text2num` (MIT), in whichever of its languages
  reads the most of them ("sixty-eight", "soixante-huit", "sesenta y ocho").
- A year said as two numbers ("nineteen fifty-five": 19 55) is joined, for dates only.
- Dates are found by `dateparser` (BSD-3-Clause), in the same languages, with the session's
  day as "today", so "in two weeks" is two weeks after the session; a date needs its day and
  month ("June" alone names no day) and a number ("now" or "tomorrow" is too often no date of
  the field's); said without a year it is the next one to come ("start on 15 September"). A
  year said in two digits takes the century that puts it no more than ten years after the
  session ("sixty-eight" is 1968).
- An amount's currency is the one its words name (`currencies`), else the field's own; an
  amount under a thousand said with no currency is no amount: people shorten large amounts
  ("budget is 500" for 500k, "1.5 now" for 1.5 million) as often as they say small ones.

Anything else is no value, and the caller proposes nothing: two numbers, no date, no currency,
or a scale said in words with no count the reader can trust before it ("half a million", "a
few hundred", and so also "a million"). The libraries are imported at first use: only a
deployment with typed fields pays for them.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

from factledger.adapters.values.currencies import meant_currency, mentions
from factledger.domain.values import DateValue, FieldValue, MoneyValue, NumberValue, ValueType

# text2num's languages, English first: a tie goes to the earlier one.
NUMBER_LANGUAGES = ("en", "fr", "es", "de", "it", "pt", "nl")

_LETTERS = re.compile(r"\b[^\W\d_]+\b")  # words; an ordinal's "th" is part of its number
_BETWEEN_LETTERS = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
# Digits as written: grouped by commas ("1,250.50"), grouped by dots with a decimal comma
# ("1.250,50", "4,5"), or plain ("1250.5"); then a scale ("450k", "2bn") or the power of a
# thousand `text2num` writes for "million" ("1.2 1000000").
_NUMBER = re.compile(
    r"(?<![\w.,])(?:"
    r"(?P<comma_grouped>\d{1,3}(?:,\d{3})+(?:\.\d+)?)"
    r"|(?P<dot_grouped>\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?|\d+,\d{1,2})"
    r"|(?P<plain>\d+(?:\.\d+)?)"
    r")(?![\d,.]\d)"
    r"(?:\s*(?P<scale>[kKmM]|bn|[mM]n)\b|\s+(?P<power>1000(?:000)*)\b)?"
)
_SCALES = {"k": 3, "m": 6, "mn": 6, "bn": 9}
_DIGITS = re.compile(r"\d+")
_YEAR_PAIR = re.compile(r"\b(1[0-9]|20) ([0-9]{2})\b")
_TWO_DIGIT_YEAR_AHEAD = 10
# An amount under this, said with no currency, is read as no amount (see `_amount`).
_BARE_AMOUNT_BELOW = 1000


def _text2num() -> Any:
    from text_to_num import alpha2digit

    return alpha2digit


def in_digits(words: str) -> str:
    """`words` with its numbers said in words written in digits, in the language that reads
    the most words as numbers (the words as they were when none does). A lone "one" or "two"
    stays a word beside other numbers ("40,000 for phase one", "no one else but 3") and is a
    number only where no other is said ("one bedroom")."""
    return _read_words(words)[0]


def _read_words(words: str) -> tuple[str, int]:
    """`in_digits`, and how many words it read as numbers."""
    text = _BETWEEN_LETTERS.sub(" ", words)
    read, count = _most_read(text, threshold=2)
    if not _DIGITS.search(read):
        read, count = _most_read(text, threshold=0)
    return (read, count) if read != text else (words, 0)


def _most_read(text: str, threshold: int) -> tuple[str, int]:
    alpha2digit = _text2num()
    before = len(_LETTERS.findall(text))
    best, read_most = text, 0
    for language in NUMBER_LANGUAGES:
        read = alpha2digit(text, language, threshold=threshold)
        words_read = before - len(_LETTERS.findall(read))
        if words_read > read_most:
            best, read_most = read, words_read
    return best, read_most


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


def _one_number(words: str) -> Decimal | None:
    digits, words_read = _read_words(words)
    counts = set(_counts(digits))
    if len({number for number, _ in counts}) != 1:
        return None
    number, bare = counts.pop()
    if bare and words_read < 2 and number not in numbers_in(words):
        # "half a million", "a few hundred": a scale said alone is no count ("one million",
        # two words read as one number, is)
        return None
    return number


def _amount(words: str, field_currency: str | None) -> MoneyValue | None:
    amount = _one_number(words)
    if amount is None:
        return None
    said = mentions(in_digits(words), NUMBER_LANGUAGES)
    if not said and amount < _BARE_AMOUNT_BELOW:
        return None  # "budget is 500", "1.5 now": as often short for 500k or 1.5 million
    code = meant_currency(said, field_currency)
    return None if code is None else MoneyValue(amount, code)


@cache
def _date_search() -> Any:
    from dateparser.search import search_dates

    return search_dates


def one_date(words: str, said_on: date) -> date | None:
    """The one date `words` name (several, or none: None), "today" being `said_on`: first as
    said in full; else a day and month said without a year ("start on 15 September") as the
    next one to come."""
    text = _YEAR_PAIR.sub(r"\1\2", in_digits(words))
    # dateparser counts in naive datetimes; a day has no time zone to lose.
    today = datetime.combine(said_on, time())
    strict = {"RELATIVE_BASE": today, "REQUIRE_PARTS": ["day", "month", "year"]}
    days = _dates(text, strict, said_on, numbers=range(1, 4))
    if not days:
        # Without a year, the day's number alone with the month's name ("3rd and the 5th"
        # gives a day and a month to dateparser as readily as "5th of May" does).
        next_to_come = {**strict, "REQUIRE_PARTS": ["day", "month"], "PREFER_DATES_FROM": "future"}
        days = _dates(text, next_to_come, said_on, numbers=range(1, 2))
    return days.pop() if len(days) == 1 else None


def _dates(text: str, settings: dict[str, Any], said_on: date, numbers: range) -> set[date]:
    """The days dateparser finds in `text` whose words hold a count of numbers in `numbers`
    (a date said with no number, "now" or "tomorrow", is too often no date of the field's)."""
    found = _date_search()(text, languages=list(NUMBER_LANGUAGES), settings=settings) or []
    return {
        _century(when.date(), said, said_on)
        for said, when in found
        if len(_DIGITS.findall(said)) in numbers
    }


def _century(day: date, said: str, said_on: date) -> date:
    """A year said in two digits names the century that puts it no more than ten years
    after the session (dateparser's reading puts "68" in 2068)."""
    if str(day.year) in said or day.year <= said_on.year + _TWO_DIGIT_YEAR_AHEAD:
        return day
    try:
        return day.replace(year=day.year - 100)
    except ValueError:  # the 29th of February of a year that is no leap year then
        return day


class WordsValueReader:
    """`ValueReader` over `text2num` and `dateparser`."""

    def read(
        self, kind: ValueType, words: str, *, said_on: date, currency: str | None = None
    ) -> FieldValue | None:
        match kind:
            case ValueType.NUMBER:
                number = _one_number(words)
                return None if number is None else NumberValue(number)
            case ValueType.MONEY:
                return _amount(words, currency)
            case ValueType.DATE:
                day = one_date(words, said_on)
                return None if day is None else DateValue(day)
        return None
