"""The one date some words name, "today" being the day they were said.

- The words are read as written, and again with their numbers said in words written in
  digits (`numbers`, ordinals included: "the first"; a year said as two numbers, "nineteen
  fifty-five", joined) when that finds no date or none with a year.
- A date written in numbers alone is read here: with dots it is day, month, year (no
  convention writes the month first with dots); with slashes or dashes it is read only when
  its order cannot matter (a part over twelve is the day, or both parts are the same) or the
  field says its order (`DateOrder`), since "12/07/1990" is July in Paris and December in
  Boston.
- Any other date is found by `dateparser` (BSD-3-Clause) in the number reader's languages,
  relative phrases counted forward from the day said ("in 6 days", "over 6 dagen"). When it
  finds nothing in the whole words it is asked again without their first words, one at a time
  ("no dia 5 de janeiro" is found as "5 de janeiro").
- A date needs its day and month and a number; said without a year it is the next such day on
  or after the day said, or none on a field that says so (`YearUnsaid.NONE`: a birthday). A
  year in two digits takes the century that puts it at most ten years after the day said
  ("sixty-eight" is 1968).
- Words that say two dates, or a number beside the date ("the 3rd, no wait the 4th of
  September", "between 1 and 15 April", "after 2 weeks notice, so the 1st of October"), name
  none: the words hold a correction, a range or a sum the reader cannot settle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time
from functools import cache
from typing import Any

from factledger.adapters.values.numbers import NUMBER_LANGUAGES, read_numbers
from factledger.application.proposals.typed import DateOrder, YearUnsaid

_DIGITS = re.compile(r"\d+")
_ORDINAL_SIGN = re.compile(r"(\d)[\u00aa\u00ba\u00b0]")  # 1º, 1ª, 1°
_YEAR_PAIR = re.compile(r"\b(1[0-9]|20) ([0-9]{2})\b")
_NUMERIC_DATE = re.compile(r"(?<![\d.,/-])(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})(?![\d.,/-]*\d)")
_TWO_DIGIT_YEAR_AHEAD = 10
# At most this many first words are dropped in turn ("a partir do dia 1º de outubro": four):
# each drop is another search, and a value's words are a phrase, not a page.
_LEADING_WORDS_DROPPED = 6


@cache
def _date_search() -> Any:
    from dateparser.search import search_dates

    return search_dates


def one_date(
    words: str,
    said_on: date,
    order: DateOrder | None = None,
    year_unsaid: YearUnsaid = YearUnsaid.NEXT,
) -> date | None:
    """The one date `words` name, else None (the module's rules): read as written, and again
    with the numbers said in words written in digits when the first reading finds no date or
    none with a year ("1st sept" is September, where French reads "sept" as seven; "le 8 mai
    deux mille trois" is 2003, where the digits alone say no year)."""
    as_written = _ORDINAL_SIGN.sub(r"\1", words)
    first = _date_in(as_written, said_on, order)
    if first is not None and (first.day is None or first.year_said):
        return first.day
    digits = _YEAR_PAIR.sub(r"\1\2", read_numbers(as_written, ones=True).text)
    second = _date_in(digits, said_on, order)
    reading = second if second is not None and (first is None or second.year_said) else first
    if reading is None or (not reading.year_said and year_unsaid is YearUnsaid.NONE):
        return None
    return reading.day


@dataclass(frozen=True, slots=True)
class _Reading:
    day: date | None  # None: dates found, but no single one
    year_said: bool = False


def _date_in(text: str, said_on: date, order: DateOrder | None) -> _Reading | None:
    """The reading of `text`; None when no date is found at all."""
    numeric = list(_NUMERIC_DATE.finditer(text))
    if numeric:
        alone = len(numeric) == 1 and _alone(text, numeric[0][0])
        return _Reading(_numeric(numeric[0], said_on, order) if alone else None, year_said=True)
    found = _found(text, said_on)
    if not found:
        return None
    if len(found) != 1 or not _alone(text, found[0][0]):
        return _Reading(None)
    said, when = found[0]
    return _with_year(when, said, said_on)


def _found(text: str, said_on: date) -> list[tuple[str, date]]:
    """What dateparser finds in `text`, else in `text` without its first words."""
    today = datetime.combine(said_on, time())  # dateparser counts in naive datetimes
    settings = {
        "RELATIVE_BASE": today,
        "REQUIRE_PARTS": ["day", "month"],
        "PREFER_DATES_FROM": "future",
    }
    words = text.split()
    for start in range(min(len(words), _LEADING_WORDS_DROPPED + 1)):
        rest = " ".join(words[start:])
        found = _date_search()(rest, languages=list(NUMBER_LANGUAGES), settings=settings) or []
        dated = [(said, when.date()) for said, when in found if _DIGITS.search(said)]
        if dated:
            return dated
    return []


def _alone(text: str, said: str) -> bool:
    """Whether the date's words are the only ones in `text` holding a number."""
    rest = text.replace(said, " ", 1)
    return not _DIGITS.search(rest)


def _with_year(when: date, said: str, said_on: date) -> _Reading:
    """`when` as dateparser read it, its year settled: as said in full; said in two digits,
    the century at most ten years ahead; not said, the next such day on or after `said_on`."""
    numbers = _DIGITS.findall(said)
    for part in (str(when.day), str(when.day).zfill(2)):
        if part in numbers:
            numbers.remove(part)  # the day's number is no year
            break
    if str(when.year) in numbers:
        return _Reading(when, year_said=True)
    if f"{when.year % 100:02d}" in numbers:
        if when.year > said_on.year + _TWO_DIGIT_YEAR_AHEAD:
            return _Reading(_in_year(when, when.year - 100), year_said=True)
        if when.year <= said_on.year + _TWO_DIGIT_YEAR_AHEAD - 100:
            return _Reading(_in_year(when, when.year + 100), year_said=True)
        return _Reading(when, year_said=True)
    this_year = _in_year(when, said_on.year)
    return _Reading(this_year if this_year >= said_on else _in_year(when, said_on.year + 1))


def _numeric(match: re.Match[str], said_on: date, order: DateOrder | None) -> date | None:
    first, separator, second, year = int(match[1]), match[2], int(match[3]), match[4]
    if separator == "." or first > 12 or first == second:
        day, month = first, second
    elif second > 12 or order is DateOrder.MONTH_FIRST:
        day, month = second, first
    elif order is DateOrder.DAY_FIRST:
        day, month = first, second
    else:
        return None  # "12/07/1990": the order decides, and the field does not say which
    full_year = int(year)
    if len(year) == 2:
        full_year += 2000 if 2000 + full_year <= said_on.year + _TWO_DIGIT_YEAR_AHEAD else 1900
    try:
        return date(full_year, month, day)
    except ValueError:
        return None


def _in_year(day: date, year: int) -> date:
    try:
        return day.replace(year=year)
    except ValueError:  # the 29th of February in a year that has none: the next leap day
        return _in_year(day, year + 1)
