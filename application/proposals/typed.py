"""Typed fields read from what was said: the port, and how a candidate's words become a value.

A deployment may type a field (`number`, `money`, `date`); the extractor finds words ("ninth
of June sixty-eight", "about five years"), and a `ValueReader` reads the field's value from
them, resolved against the day the session was said. Words it cannot read as one value of
the type give no candidate: a typed field never holds text, and a guess is worse than none.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Protocol

from factledger.domain.values import FieldValue, ValueType

TYPED = frozenset({ValueType.NUMBER, ValueType.MONEY, ValueType.DATE})


class DateOrder(StrEnum):
    """How a date field's dates written in numbers alone are ordered ("12/07/1990")."""

    DAY_FIRST = "day_first"
    MONTH_FIRST = "month_first"


class ValueReader(Protocol):
    def read(
        self,
        kind: ValueType,
        words: str,
        *,
        said_on: date,
        currency: str | None = None,
        date_order: DateOrder | None = None,
    ) -> FieldValue | None:
        """The one value of type `kind` that `words` say, else None. `currency`: a money
        field's own, for an amount whose words name none; `date_order`: a date field's, for
        a date in numbers whose order the numbers do not settle (None: no such date)."""
        ...
