"""The typed-value reader over `text2num`, `dateparser` and the CLDR's currency names: what
it reads as one value of a type, and what it leaves unread rather than guess."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from factledger.adapters.values.numbers import numbers_in, read_numbers
from factledger.adapters.values.words import WordsValueReader
from factledger.application.proposals.typed import DateOrder, ReadingHints, YearUnsaid
from factledger.domain.values import DateValue, MoneyValue, NumberValue, ValueType

SESSION_DAY = date(2026, 3, 1)
reader = WordsValueReader()


def read(kind: ValueType, words: str, currency: str | None = None) -> object:
    return reader.read(kind, words, said_on=SESSION_DAY, hints=ReadingHints(currency=currency))


@pytest.mark.parametrize(
    ("words", "day"),
    [
        ("ninth of June sixty-eight", date(1968, 6, 9)),
        ("My date of birth is 9 June 68", date(1968, 6, 9)),
        ("Twenty-first of July nineteen-fifty-two", date(1952, 7, 21)),
        ("second of November, nineteen fifty-five", date(1955, 11, 2)),
        ("We have to be out by 1 September 2027 at the latest", date(2027, 9, 1)),
        ("le neuf juin mille neuf cent soixante-huit", date(1968, 6, 9)),
        ("nueve de junio de mil novecientos sesenta y ocho", date(1968, 6, 9)),
        ("am 9. Juni 1968", date(1968, 6, 9)),
        ("1968-06-09", date(1968, 6, 9)),
        ("in two weeks", date(2026, 3, 15)),
        ("5 May 2045", date(2045, 5, 5)),  # a year said in four digits stays as said
        ("5 May 36", date(2036, 5, 5)),  # two digits, within ten years of the session
        ("Earliest start is 15 September", date(2026, 9, 15)),  # no year: the next to come
        ("march 2 earliest", date(2026, 3, 2)),
        ("feb 2nd i think??", date(2027, 2, 2)),
    ],
)
def test_a_date_said_in_words_or_digits_is_read_against_the_sessions_day(
    words: str, day: date
) -> None:
    assert read(ValueType.DATE, words) == DateValue(day)


@pytest.mark.parametrize(
    "words",
    [
        "April eighty-eight",  # no day
        "on the 14th",  # no month
        "tomorrow",  # no number: "now" and "today" are too often no date of the field's
        "between the 3rd and the 5th of May 2026",  # two dates
        "sometime next year, probably",
    ],
)
def test_words_naming_no_single_full_date_read_as_none(words: str) -> None:
    assert read(ValueType.DATE, words) is None


@pytest.mark.parametrize(
    ("words", "number"),
    [
        ("about five years now", Decimal(5)),
        ("It's just the two of us", Decimal(2)),
        ("one", Decimal(1)),
        ("twelve", Decimal(12)),
        ("1,200", Decimal(1200)),
        ("3.5", Decimal("3.5")),
        ("4,5", Decimal("4.5")),
        ("dos dormitorios", Decimal(2)),
        ("zwei Schlafzimmer", Decimal(2)),
        ("one hundred and five", Decimal(105)),
    ],
)
def test_one_number_said_in_words_or_digits_is_read(words: str, number: Decimal) -> None:
    assert read(ValueType.NUMBER, words) == NumberValue(number)


@pytest.mark.parametrize(
    "words",
    [
        "Nine techs, two at the counter",  # two numbers: their sum is a guess
        "three or four",
        "a few hundred",  # a scale said in words with no count before it
        "half a million",
        "quite a lot",
    ],
)
def test_words_saying_no_single_number_read_as_none(words: str) -> None:
    assert read(ValueType.NUMBER, words) is None


@pytest.mark.parametrize(
    ("words", "field_currency", "amount", "currency"),
    [
        ("about four hundred and fifty thousand", "GBP", Decimal(450000), "GBP"),
        ("$450k", "AUD", Decimal(450000), "AUD"),  # "$" may mean the field's dollar
        ("€1.2 million", "USD", Decimal(1200000), "EUR"),  # the words name another
        ("around 4,500 euros a month", None, Decimal(4500), "EUR"),
        ("1.500 €", None, Decimal(1500), "EUR"),
        ("1.250,50 EUR", None, Decimal("1250.50"), "EUR"),
        ("CAD 300", None, Decimal(300), "CAD"),
        ("300 dollars canadiens", None, Decimal(300), "CAD"),
        ("300 libras esterlinas", None, Decimal(300), "GBP"),
        ("mil quinientos euros", None, Decimal(1500), "EUR"),
        ("250 Schweizer Franken", "EUR", Decimal(250), "CHF"),
        ("320 thousand pounds", "GBP", Decimal(320000), "GBP"),
        ("the real budget is 3000", "USD", Decimal(3000), "USD"),  # names count beside numbers
        ("750 dollars", "USD", Decimal(750), "USD"),  # a small amount with its currency
        ("Roughly 40,000 dollars for phase one", "USD", Decimal(40000), "USD"),  # "one": a word
        ("one million dollars", "USD", Decimal(1000000), "USD"),  # a count before the scale
        ("I'd need 1 million NOK", "USD", Decimal(1000000), "NOK"),
        ("1,5 millones de euros", None, Decimal(1500000), "EUR"),
    ],
)
def test_an_amount_takes_the_currency_its_words_name_else_the_fields(
    words: str, field_currency: str | None, amount: Decimal, currency: str
) -> None:
    assert read(ValueType.MONEY, words, field_currency) == MoneyValue(amount, currency)


@pytest.mark.parametrize(
    ("words", "field_currency"),
    [
        ("$450k", None),  # a dollar of which country?
        ("320 thousand pounds", "USD"),  # pounds are not the field's dollars
        ("four hundred and fifty thousand", None),  # no currency at all
        ("Go to seven-fifty", "USD"),  # said as two numbers
        ("three or four hundred thousand dollars", "USD"),
        # Under a thousand with no currency: as often short for thousands or millions.
        ("budget is 500", "USD"),
        ("1.5 now", "USD"),
        ("Five grand", "USD"),
        ("a million dollars", "USD"),  # a scale said alone
    ],
)
def test_an_amount_without_one_currency_or_one_number_reads_as_none(
    words: str, field_currency: str | None
) -> None:
    assert read(ValueType.MONEY, words, field_currency) is None


def test_text_lists_and_booleans_are_not_read_from_words() -> None:
    for kind in (ValueType.TEXT, ValueType.LIST, ValueType.BOOLEAN):
        assert read(kind, "twelve") is None


def test_numbers_are_written_in_the_language_that_reads_the_most_words() -> None:
    assert read_numbers("mil quinientos euros").text == "1500 euros"
    assert read_numbers("ninth of June sixty-eight").text == "9th of June 68"
    assert read_numbers("nothing to read here").text == "nothing to read here"


def test_digits_are_read_with_their_grouping_and_scale() -> None:
    assert numbers_in("1,250.50 or 1.250,50") == [Decimal("1250.5"), Decimal("1250.5")]
    assert numbers_in("450k, 2bn, 1.2 1000000") == [
        Decimal(450000),
        Decimal(2000000000),
        Decimal(1200000),
    ]
    assert numbers_in("version 1.2.3") == []


@pytest.mark.parametrize(
    ("words", "said_on", "day"),
    [
        ("geboren am 3.4.1990", SESSION_DAY, date(1990, 4, 3)),  # dots: day, month, year
        ("30/09/90", SESSION_DAY, date(1990, 9, 30)),  # a part over twelve is the day
        ("09/30/1990", SESSION_DAY, date(1990, 9, 30)),
        ("renewal on 17 April", date(2026, 4, 17), date(2026, 4, 17)),  # the day itself
        ("renewal on 17 April", date(2026, 4, 18), date(2027, 4, 17)),  # just passed
        ("no dia 5 de janeiro de 2026", SESSION_DAY, date(2026, 1, 5)),  # found without "no dia"
        ("a partir do dia 1º de outubro", SESSION_DAY, date(2026, 10, 1)),
        ("lease ends March first, thirty-six", SESSION_DAY, date(2036, 3, 1)),
        ("over 6 dagen", SESSION_DAY, date(2026, 3, 7)),  # counted forward
        ("1st sept is more realistic now", SESSION_DAY, date(2026, 9, 1)),  # not French seven
        ("née le 8 mai deux mille trois", SESSION_DAY, date(2003, 5, 8)),  # its year in words
    ],
)
def test_a_dates_order_year_and_words_around_it_are_settled(
    words: str, said_on: date, day: date
) -> None:
    assert reader.read(ValueType.DATE, words, said_on=said_on) == DateValue(day)


@pytest.mark.parametrize(
    "words",
    [
        "le 12/07/1990",  # July in Paris, December in Boston
        "the 3rd, no wait the 4th of September",  # a correction holding both
        "tussen 1 en 15 april",  # a range
        "after 2 weeks notice, so like 1st october",  # a number beside the date
    ],
)
def test_words_whose_date_depends_on_what_they_do_not_say_read_as_none(words: str) -> None:
    assert read(ValueType.DATE, words) is None


@pytest.mark.parametrize(
    ("kind", "words", "currency", "value"),
    [
        (ValueType.NUMBER, "à peu près 1 250 salariés", None, NumberValue(Decimal(1250))),
        (ValueType.MONEY, "autour de 450 000 €", None, MoneyValue(Decimal(450000), "EUR")),
        (ValueType.MONEY, "2'300 Franken", None, MoneyValue(Decimal(2300), "CHF")),
        (ValueType.MONEY, "uns 450 mil", "BRL", MoneyValue(Decimal(450000), "BRL")),  # "uns": a
        (ValueType.NUMBER, "een paar", None, None),  # outside English, "one" is an article
        (ValueType.NUMBER, "un par de empleados", None, None),
    ],
)
def test_grouped_digits_scales_in_words_and_articles_are_read_as_said(
    kind: ValueType, words: str, currency: str | None, value: object
) -> None:
    assert read(kind, words, currency) == value


def test_a_date_in_numbers_whose_order_matters_is_read_in_the_fields_order() -> None:
    def on(order: DateOrder | None) -> object:
        hints = ReadingHints(date_order=order)
        return reader.read(ValueType.DATE, "le 12/07/1990", said_on=SESSION_DAY, hints=hints)

    assert on(None) is None
    assert on(DateOrder.DAY_FIRST) == DateValue(date(1990, 7, 12))
    assert on(DateOrder.MONTH_FIRST) == DateValue(date(1990, 12, 7))
    # A part over twelve settles it whatever the field says.
    month_first = ReadingHints(date_order=DateOrder.MONTH_FIRST)
    late = reader.read(ValueType.DATE, "25/07/1990", said_on=SESSION_DAY, hints=month_first)
    assert late == DateValue(date(1990, 7, 25))


def test_a_field_may_read_a_day_and_month_said_without_a_year_as_no_date() -> None:
    birthday = ReadingHints(year_unsaid=YearUnsaid.NONE)

    def on(words: str, hints: ReadingHints) -> object:
        return reader.read(ValueType.DATE, words, said_on=SESSION_DAY, hints=hints)

    assert on("my birthday is the 9th of June", ReadingHints()) == DateValue(date(2026, 6, 9))
    assert on("my birthday is the 9th of June", birthday) is None
    assert on("the 9th of June 1968", birthday) == DateValue(date(1968, 6, 9))
    assert on("9 June 68", birthday) == DateValue(date(1968, 6, 9))
