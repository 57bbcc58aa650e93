"""Typed fields read from what was said: the port, and how a candidate's words become a value.

A deployment may type a field (`number`, `money`, `date`); the extractor finds words ("ninth
of June sixty-eight", "about five years"), and a `ValueReader` reads the field's value from
them, resolved against the day the session was said. Words it cannot read as one value of
the type give no candidate: a typed field never holds text, and a guess is worse than none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Protocol

from factledger.domain.values import FieldValue, ValueType

TYPED = frozenset({ValueType.NUMBER, ValueType.MONEY, ValueType.DATE})


class DateOrder(StrEnum):
    """How a date field's dates written in numbers alone are ordered ("12/07/1990")."""

    DAY_FIRST = "day_first"
    MONTH_FIRST = "month_first"


class YearUnsaid(StrEnum):
    """What a date field makes of a day and month said without a year."""

    NEXT = "next"  # the next such day on or after the day said ("start on 15 September")
    NONE = "none"  # no date: a birthday said without its year names none


@dataclass(frozen=True, slots=True)
class ReadingHints:
    """What a field says about reading its values: a money field's own `currency`, for an
    amount whose words name none; a date field's `date_order`, for a date in numbers whose
    order the numbers do not settle (None: no such date), and what a date said without a
    year is (`year_unsaid`)."""

    currency: str | None = None
    date_order: DateOrder | None = None
    year_unsaid: YearUnsaid = YearUnsaid.NEXT


NO_HINTS = ReadingHints()


class ValueReader(Protocol):
    def read(
        self, kind: ValueType, words: str, *, said_on: date, hints: ReadingHints = NO_HINTS
    ) -> FieldValue | None:
        """The one value of type `kind` that `words` say, else None, `said_on` being "today"."""
        ...
