"""Which currency an amount's words name, from the Unicode CLDR's names and symbols.

`babel` (BSD-3-Clause) ships the CLDR's currency names in every language it knows. The index
holds the currencies legal tender somewhere today, and for the number reader's languages each
one's names (singular and plural: "British pounds", "libras esterlinas"), the noun of each
name ("pounds", "dollars", "libras"), and its symbols with their bare signs ("CA$" also as
"$"); an ISO code counts when written in capitals.

A name counts only beside a number ("250 pounds", "pounds 250"), so "the real budget" names
no Brazilian real; a sign counts anywhere. A mention names the set of currencies it may mean:
the field's own currency settles a mention that may mean it, and anything still ambiguous
names none ("400 dollars" on a field with no currency of its own).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from functools import cache

_TOKEN = re.compile(r"\d[\d,.]*|[^\W\d_]+", re.UNICODE)
_LONGEST_NAME = 4  # words, as in "dólar de los Estados Unidos"
_BESIDE = 2  # tokens between a name and the number it follows


@dataclass(frozen=True, slots=True)
class CurrencyIndex:
    codes: frozenset[str]
    names: dict[str, frozenset[str]]  # a name or noun in lower case -> the codes it may mean
    signs: dict[str, frozenset[str]]  # "€", "$", "CA$" -> the codes it may mean


# Languages whose currency names put the noun first ("livres sterling", "dólares canadienses").
_NOUN_FIRST = frozenset({"fr", "es", "it", "pt"})


def _noun(name: str, language: str) -> str | None:
    """The noun of a multi-word name, which names the unit without the rest ("pounds" of
    "British pounds", "libras" of "libras esterlinas")."""
    words = name.split()
    if len(words) < 2:
        return None
    return words[0] if language in _NOUN_FIRST else words[-1]


@cache
def currency_index(languages: tuple[str, ...]) -> CurrencyIndex:
    from babel import Locale
    from babel.core import get_global
    from babel.numbers import get_currency_name, get_currency_symbol, get_territory_currencies

    current = {
        code
        for territory in get_global("territory_currencies")
        for code in get_territory_currencies(territory, tender=True)
    }
    known = set(Locale.parse("en").currencies) & current
    names: dict[str, set[str]] = defaultdict(set)
    signs: dict[str, set[str]] = defaultdict(set)
    for language in languages:
        for code in known:
            for count in (None, 1, 2):
                name = get_currency_name(code, count=count, locale=language).lower()
                names[name].add(code)
                if (noun := _noun(name, language)) is not None:
                    names[noun].add(code)
            symbol = get_currency_symbol(code, locale=language)
            if _is_sign(symbol):
                signs[symbol].add(code)
                bare = "".join(c for c in symbol if _is_sign(c))
                signs[bare].add(code)
    return CurrencyIndex(
        frozenset(known),
        {k: frozenset(v) for k, v in names.items() if len(k) > 2},
        {k: frozenset(v) for k, v in signs.items()},
    )


def _is_sign(text: str) -> bool:
    """Whether `text` holds a currency sign (Unicode's `Sc`: "$", "€", "£", "₹"); letters
    and dots ("kr", "Fr.") are words, not signs."""
    return any(unicodedata.category(c) == "Sc" for c in text)


def mentions(words: str, languages: tuple[str, ...]) -> list[frozenset[str]]:
    """Each currency mention in `words`: the set of currencies it may mean."""
    index = currency_index(languages)
    found = [codes for sign, codes in index.signs.items() if sign in words]
    tokens = _TOKEN.findall(words)
    numbers = [i for i, t in enumerate(tokens) if t[0].isdigit()]
    at = 0
    while at < len(tokens):
        for width in range(min(_LONGEST_NAME, len(tokens) - at), 0, -1):
            said = tokens[at : at + width]
            codes = (
                frozenset({said[0]})
                if width == 1 and said[0] in index.codes
                else index.names.get(" ".join(said).lower())
            )
            end = at + width
            beside = any(at - _BESIDE - 1 <= n < at or n == end for n in numbers)
            if codes is not None and beside:
                found.append(codes)
                at = end
                break
        else:
            at += 1
    return found


def meant_currency(said: list[frozenset[str]], field_currency: str | None) -> str | None:
    """The ISO code of the currency the mentions `said` mean, else the field's own; None when
    they may mean currencies the field's own is not among and no single one is meant."""
    if not said:
        return field_currency
    if field_currency is not None and all(field_currency in codes for codes in said):
        return field_currency
    common = frozenset.intersection(*said)
    return next(iter(common)) if len(common) == 1 else None
