"""Relative dates ("next quarter", "in two weeks") resolved against the interaction's date.

The original words are kept; the resolution is added beside them: "next quarter (2026-Q3)".
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a few": 3,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNT = r"(?P<n>\d{1,3}|a couple of|a few|" + "|".join(k for k in _NUMBERS if " " not in k) + ")"
_UNIT = r"(?P<unit>day|week|month|year|quarter)s?"
_PATTERN = re.compile(
    r"\b(?:"
    r"(?P<day_word>the day after tomorrow|the day before yesterday|today|tonight|tomorrow|"
    r"yesterday|last night|this morning|this afternoon|this evening)"
    rf"|(?:in|within) {_COUNT} {_UNIT}"
    rf"|{_COUNT.replace('?P<n>', '?P<n_ago>')} {_UNIT.replace('?P<unit>', '?P<unit_ago>')} ago"
    r"|(?P<rel>next|last|this|coming|past) (?P<period>week|month|quarter|year|weekend|"
    + "|".join(_WEEKDAYS)
    + r")(?!\s+of\b)"  # "the last week of term" names no date
    r"|(?P<season_rel>in|this|next|last|by|during|over the|in the) "
    r"(?P<season>spring|summer|autumn|fall|winter)(?!\s+(?:of|sale|range|collection)\b)"
    r")\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DateMention:
    """A relative date found in a text, with what it resolves to."""

    words: str
    start: int
    end: int
    label: str  # "2026-03-11", "2026-04", "2026-Q3", "2027", "week of 2026-03-16"
    day: date  # the first day the mention covers

    @property
    def annotated(self) -> str:
        return f"{self.words} ({self.label})"


def find_dates(text: str, anchor: datetime) -> list[DateMention]:
    """Every relative date in `text`, resolved against `anchor` (the interaction's time)."""
    today = anchor.date()
    past = _PAST.search(text) is not None and _FUTURE.search(text) is None
    mentions = []
    for match in _PATTERN.finditer(text):
        resolved = _resolve(match, today, past=past)
        if resolved is not None:
            label, day = resolved
            mentions.append(DateMention(match.group(0), match.start(), match.end(), label, day))
    return mentions


def annotate(text: str, mentions: list[DateMention]) -> str:
    """`text` with each mention followed by its resolution in parentheses."""
    for mention in sorted(mentions, key=lambda m: m.start, reverse=True):
        text = text[: mention.start] + mention.annotated + text[mention.end :]
    return text


def strip_dates(text: str, mentions: list[DateMention]) -> str:
    """`text` without the mentions, so slot patterns see the bare statement."""
    for mention in sorted(mentions, key=lambda m: m.start, reverse=True):
        text = text[: mention.start] + text[mention.end :]
    return re.sub(r"\s{2,}", " ", text).strip()


def _resolve(match: re.Match[str], today: date, *, past: bool) -> tuple[str, date] | None:
    if word := match.group("day_word"):
        offsets = {"the day after tomorrow": 2, "tomorrow": 1, "yesterday": -1, "last night": -1}
        offsets["the day before yesterday"] = -2
        day = today + timedelta(days=offsets.get(word.lower(), 0))
        return day.isoformat(), day
    if match.group("n"):
        return _shift(today, _count(match.group("n")), match.group("unit").lower())
    if match.group("n_ago"):
        return _shift(today, -_count(match.group("n_ago")), match.group("unit_ago").lower())
    if match.group("season"):
        rel = match.group("season_rel").lower()
        if past and rel in _PLAIN_SEASON:  # "we moved over the summer": the one just gone
            rel = "last"
        return _season(today, rel, match.group("season").lower())
    return _relative_period(today, match.group("rel").lower(), match.group("period").lower())


def _count(words: str) -> int:
    return int(words) if words.isdigit() else _NUMBERS[words.lower()]


def _shift(today: date, n: int, unit: str) -> tuple[str, date]:
    if unit == "day":
        day = today + timedelta(days=n)
    elif unit == "week":
        day = today + timedelta(weeks=n)
    else:
        months = {"month": 1, "quarter": 3, "year": 12}[unit] * n
        day = _add_months(today, months)
    return day.isoformat(), day


def _relative_period(today: date, rel: str, period: str) -> tuple[str, date] | None:
    step = {"next": 1, "coming": 1, "last": -1, "past": -1, "this": 0}[rel]
    if period in _WEEKDAYS:
        return _weekday(today, _WEEKDAYS.index(period), step)
    if period in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
        if period == "weekend":
            saturday = monday + timedelta(days=5)
            return saturday.isoformat(), saturday
        return f"week of {monday.isoformat()}", monday
    if period == "month":
        first = _add_months(today.replace(day=1), step)
        return f"{first.year:04d}-{first.month:02d}", first
    if period == "quarter":
        quarter_start = today.replace(day=1, month=3 * ((today.month - 1) // 3) + 1)
        first = _add_months(quarter_start, 3 * step)
        return f"{first.year:04d}-Q{(first.month - 1) // 3 + 1}", first
    first = date(today.year + step, 1, 1)
    return f"{first.year:04d}", first


# A season named without "next" or "last" is the coming one, or the latest one in a sentence
# told in the past tense.
_PLAIN_SEASON = frozenset({"in", "over the", "during", "in the"})
_PAST = re.compile(
    r"\b(?:\w{3,}ed|went|was|were|had|did|got|came|left|began|became|bought|sold|took|made)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(r"\b(?:will|'ll|going to|plan|plans|planning|hope|might|may)\b", re.I)

# The meteorological seasons of the northern hemisphere, by their first month.
_SEASON_STARTS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _season(today: date, rel: str, season: str) -> tuple[str, date]:
    """ "in spring" said in February is the coming one; said in April, the one under way;
    "next" skips the one under way; "last" is the latest that has ended."""
    start = date(today.year, _SEASON_STARTS[season], 1)
    latest = start if start <= today else _add_months(start, -12)
    under_way = today < _add_months(latest, 3)
    if rel == "last":
        first = _add_months(latest, -12) if under_way else latest
    elif rel == "next" or not under_way:
        first = _add_months(latest, 12)
    else:
        first = latest
    label = "autumn" if season == "fall" else season
    return f"{label} {first.year:04d}", first


def _weekday(today: date, weekday: int, step: int) -> tuple[str, date]:
    delta = weekday - today.weekday()
    if step > 0:
        delta = delta if delta > 0 else delta + 7
    elif step < 0:
        delta = delta if delta < 0 else delta - 7
    day = today + timedelta(days=delta)
    return day.isoformat(), day


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))
