"""The typed-value reader: a number, an amount or a date from the words that said it.

The parts: `numbers` (numbers in words and digits, `text2num`), `dates` (`dateparser`, the
day said as "today"), `currencies` (the CLDR's currency names and symbols, `babel`). An
amount's currency is the one its words name, else the field's own; an amount under a
thousand said with no currency is no amount: people shorten large amounts ("budget is 500"
for 500k, "1.5 now" for 1.5 million) as often as they say small ones. Anything the parts read
as no single value is no value, and the caller proposes nothing. The libraries are imported
at first use: only a deployment with typed fields pays for them.
"""

from __future__ import annotations

from datetime import date

from factledger.adapters.values.currencies import meant_currency, mentions
from factledger.adapters.values.dates import one_date
from factledger.adapters.values.numbers import NUMBER_LANGUAGES, one_number, read_numbers
from factledger.application.proposals.typed import NO_HINTS, ReadingHints
from factledger.domain.values import DateValue, FieldValue, MoneyValue, NumberValue, ValueType

# An amount under this, said with no currency, is read as no amount (see `_amount`).
_BARE_AMOUNT_BELOW = 1000


def _amount(words: str, field_currency: str | None) -> MoneyValue | None:
    reading = read_numbers(words)
    amount = one_number(words, reading)
    if amount is None:
        return None
    said = mentions(reading.text, NUMBER_LANGUAGES)
    if not said and amount < _BARE_AMOUNT_BELOW:
        return None  # "budget is 500", "1.5 now": as often short for 500k or 1.5 million
    code = meant_currency(said, field_currency)
    return None if code is None else MoneyValue(amount, code)


class WordsValueReader:
    """`ValueReader` over `text2num`, `dateparser` and `babel`."""

    def read(
        self, kind: ValueType, words: str, *, said_on: date, hints: ReadingHints = NO_HINTS
    ) -> FieldValue | None:
        match kind:
            case ValueType.NUMBER:
                number = one_number(words)
                return None if number is None else NumberValue(number)
            case ValueType.MONEY:
                return _amount(words, hints.currency)
            case ValueType.DATE:
                day = one_date(words, said_on, hints.date_order, hints.year_unsaid)
                return None if day is None else DateValue(day)
        return None
