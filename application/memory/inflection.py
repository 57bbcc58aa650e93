"""Keyword inflections folded together, so "research" finds a fact said as "researching".

Each keyword is replaced by its lemma from `simplemma` (MIT; its dictionaries ship in the
wheel and load from it, nothing is fetched): plurals, verb endings and irregular forms
("ran" -> "run", "studied" -> "study") meet their base form. The language is the keyword
analysis's (`KEYWORD_LANGUAGE`); a word the dictionary does not hold is kept as it is.

`simplemma` is imported at the first word folded, not with this module: its import compiles
the rules of every language it knows (a few hundred regular expressions), some 7% of the
imports of a start to ready, and a served process imports it on a thread once it is ready
(`api/bootstrap/deferred_imports.py`).
"""

from __future__ import annotations

from functools import lru_cache

# The language memories' keywords are analysed in (simplemma's and the stopword list's code).
KEYWORD_LANGUAGE = "en"
MIN_LENGTH = 4  # "bus", "was", "his": short words are left as they are


@lru_cache(maxsize=65_536)
def fold_inflection(word: str) -> str:
    """The word's lemma (lower-case); short and non-alphabetic words unchanged."""
    if len(word) < MIN_LENGTH or not word.isalpha():
        return word
    import simplemma  # deferred: see the module's docstring

    lemma: str = simplemma.lemmatize(word, lang=KEYWORD_LANGUAGE)
    return lemma.lower()
