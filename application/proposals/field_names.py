"""Whether a value says nothing but the name of its field (ADR 0234).

A reader that reads what a line says about a field sometimes takes the words that refer to
the field for its value: "Same address", "Budget as before.", "Emergency contact", "my
policy". Proposed, such a value would supersede the address or budget it only points back
to. A value names only its field when it has a word that is not a function word, and every
such word is a word of the field's name, lemmas folded ("policies" is "policy"). The function
words are the `stopwords` library's, those recall's keyword scoring leaves out; a capitalised
word after the value's first is part of a name, never a function word ("Supplier A" names a
supplier).
"""

from __future__ import annotations

import re

from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.scoring import STOPWORDS

_WORD = re.compile(r"\w+")


def _lemmas(text: str) -> list[str]:
    """The text's words, lemmas folded, without its function words."""
    words = _WORD.findall(text)
    return [
        fold_inflection(w.casefold())
        for n, w in enumerate(words)
        if w.casefold() not in STOPWORDS or (n > 0 and w[:1].isupper())
    ]


def restates_field(value: str, field: str) -> bool:
    """Whether every word of `value` beside the function words is a word of `field`'s name
    (underscores read as spaces); a value of function words only is not judged here."""
    said = _lemmas(value)
    named = set(_lemmas(field.replace("_", " ").casefold()))
    return bool(said) and all(w in named for w in said)
