"""Keyword inflections folded together, so "research" finds a fact said as "researching".

A keyword is replaced by a lemma two libraries agree on, each reading its data from its own
wheel (nothing is fetched):

- `simplemma` (MIT) proposes the lemma. Alone it also joins words that are no inflection of
  each other: its dictionaries hold other languages' forms under English ("maria", a
  person's name, is the Latin plural of "mare") and some misread endings ("playing" ->
  "playe"), and a question that names a person then meets notes about something else.
- `lemminflect` (MIT) checks it: its English lexicon lists each word's lemmas per part of
  speech. A lemma it lists is taken; when it lists others, its own is taken (verb first, the
  order questions and notes differ most in: "playing" -> "play"). A word its lexicon does
  not hold (a name, a brand, a rare word) is only de-pluralised by its regular noun rule
  ("labs" -> "lab"), never turned into another word ("maria", "omar" stay).

The language is the keyword analysis's (`KEYWORD_LANGUAGE`).

`simplemma` is imported at the first word folded, not with this module: its import compiles
the rules of every language it knows (a few hundred regular expressions), some 7% of the
imports of a start to ready, and a served process imports it on a thread once it is ready
(`api/bootstrap/deferred_imports.py`). lemminflect is a start's import already (the
confirmation questions' verbs).
"""

from __future__ import annotations

from functools import lru_cache

from lemminflect import getAllLemmas, getAllLemmasOOV

# The language memories' keywords are analysed in (simplemma's and the stopword list's code;
# lemminflect holds English only).
KEYWORD_LANGUAGE = "en"
MIN_LENGTH = 4  # "bus", "was", "his": short words are left as they are
# The order a lexicon's lemmas are preferred in when the proposed one is not among them.
_PARTS_OF_SPEECH = ("VERB", "NOUN", "ADJ", "ADV", "AUX")
_NOUN = "NOUN"


@lru_cache(maxsize=65_536)
def fold_inflection(word: str) -> str:
    """The word's lemma (lower-case) as both libraries read it; short and non-alphabetic
    words unchanged."""
    if len(word) < MIN_LENGTH or not word.isalpha():
        return word
    import simplemma  # deferred: see the module's docstring

    word = word.lower()
    proposed = simplemma.lemmatize(word, lang=KEYWORD_LANGUAGE).lower()
    listed = lexicon_lemmas(word)
    if listed:
        return proposed if proposed in listed else listed[0]
    regular: tuple[str, ...] = getAllLemmasOOV(word, _NOUN).get(_NOUN, ())
    return proposed if proposed in regular else word


def load_lexicons() -> None:
    """Reads both libraries' English data now: each reads it at its first word (about half a
    second of CPU between them, and simplemma's import), which would otherwise fall on the
    first facts a process indexes."""
    fold_inflection("warming")


def lexicon_lemmas(word: str) -> tuple[str, ...]:
    """The lemmas lemminflect's lexicon lists for a word, verbs first; empty when it does not
    hold the word."""
    found = getAllLemmas(word)
    return tuple(
        dict.fromkeys(lemma.lower() for part in _PARTS_OF_SPEECH for lemma in found.get(part, ()))
    )
