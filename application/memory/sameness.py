"""Whether two wordings state the same value, and whether a note states a value.

Values are compared by what they say, not by their characters: case, accents, punctuation and
spacing do not count ("Supplier-B" is "supplier b"), and numbers are compared as numbers
("12,000", "12000", "12k" and "12 000" are one amount; "1.5m" is 1500000). A currency sign or
code next to an amount does not change it. Paraphrases beyond that ("two weeks" and "a
fortnight") are left to a caller that has an embedder.

A value can also name what another names with fewer words (`shortens`): "Obinna" for "Obinna
Eze", "Fernhill Dental" for "Fernhill Dental Group". The test is orthographic, not lexical:
only capitalised words may be left out, and the shorter wording keeps one, so "smoker" never
shortens "non-smoker" nor "Pro" "Pro plan" (ADR 0230).

Pure and language-neutral: no word lists.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation

# A number as people write it: thousands separators (comma, point, thin or plain space
# between groups of three), a decimal part, and an optional k/m/bn multiplier.
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:[, \u202f\u00a0]\d{3})+|\d+)(?:\.(\d+))?\s?(k|m|bn)?(?![\w])",
    re.IGNORECASE,
)
_MULTIPLIERS = {"k": Decimal(1_000), "m": Decimal(1_000_000), "bn": Decimal(1_000_000_000)}
_WORD = re.compile(r"\w+")


def _amount(whole: str, fraction: str | None, multiplier: str | None) -> Decimal | None:
    digits = re.sub(r"[^\d]", "", whole)
    try:
        number = Decimal(f"{digits}.{fraction}" if fraction else digits)
    except InvalidOperation:
        return None
    if multiplier:
        number *= _MULTIPLIERS[multiplier.lower()]
    return number.normalize()


def _unaccented(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(text: str) -> tuple[str, ...]:
    """The text as comparable tokens: words case- and accent-folded, numbers normalised (a
    number's token is its canonical decimal, so equal amounts give equal tokens)."""
    folded = _unaccented(text).casefold()
    out: list[str] = []
    position = 0
    for match in _NUMBER.finditer(folded):
        out.extend(_WORD.findall(folded[position : match.start()]))
        number = _amount(match.group(1), match.group(2), match.group(3))
        out.append(f"#{number}" if number is not None else match.group(0))
        position = match.end()
    out.extend(_WORD.findall(folded[position:]))
    return tuple(t.replace("_", " ") for t in out if t != "_")


def same_value(a: str, b: str) -> bool:
    """Whether two wordings of a value say the same (see the module docstring)."""
    left, right = tokens(a), tokens(b)
    if not left or not right:
        return a.strip() == b.strip()
    if left == right:
        return True
    # An amount with and without its unit or currency ("12000" and "USD 12,000") is one
    # amount, when the amount is all the shorter wording says.
    numbers_left = [t for t in left if t.startswith("#")]
    numbers_right = [t for t in right if t.startswith("#")]
    shorter = left if len(left) <= len(right) else right
    return bool(numbers_left) and numbers_left == numbers_right and len(shorter) == 1


def shortens(short: str, long: str) -> bool:
    """Whether `short` names what `long` names with some of its capitalised words left out: its
    words are among `long`'s, it holds no number, it keeps a capitalised word, and every word
    it leaves out is capitalised (a cased script's proper-noun words: a surname, "Group")."""
    mine = set(tokens(short))
    if not mine or any(t.startswith("#") for t in mine) or not mine < set(tokens(long)):
        return False
    kept = _WORD.findall(_unaccented(short))
    left_out = [w for w in _WORD.findall(_unaccented(long)) if w.casefold() not in mine]
    return any(w[0].isupper() for w in kept) and all(w[0].isupper() for w in left_out)


def states(text: str, value: str) -> bool:
    """Whether `text` states `value`: the value's tokens appear in it, in order and together."""
    needle, hay = tokens(value), tokens(text)
    if not needle:
        return False
    width = len(needle)
    return any(hay[i : i + width] == needle for i in range(len(hay) - width + 1))


def value_phrases(payload: Mapping[str, object] | None) -> list[str]:
    """The wordings a stored value payload (`domain.values.to_payload`) is said with: a text's
    text, a list's items, a number's or an amount's digits (without its currency) and a
    date's ISO form. A yes/no, an erased or a malformed payload gives none."""
    if payload is None:
        return []
    raw = payload.get("value")
    match payload.get("type"):
        case "text" | "number" | "date" if isinstance(raw, str) and raw.strip():
            return [raw]
        case "money" if isinstance(amount := payload.get("amount"), str) and amount.strip():
            return [amount]
        case "list" if isinstance(items := payload.get("items"), list):
            return [i for i in items if isinstance(i, str) and i.strip()]
    return []


def any_states(text: str, values: Sequence[str]) -> bool:
    return any(states(text, v) for v in values)
