"""Keyword inflections folded together, so "research" finds a fact said as "researching".

Only English plural and verb endings are stripped (-s, -es, -ies, -ing, -ed), and nothing is
put back: a word whose base ends in "e" keeps its base apart from its inflected forms ("move"
vs "moved" and "moving", both "mov"). Putting the "e" back, as Porter's step 1b does, joins
"moves" with "moved", and on the natural-question set an agent asking who "moves their
parcels" was then shown "moved to Lucca". Derivations (-er, -ness, -ic, -y) are
never stripped: "allergic" and "allergy", "supplier" and "supplies" stay apart, since the
asked-about words already name a kind in its own words.
"""

from __future__ import annotations

MIN_LENGTH = 4  # "bus", "was", "his": short words are left as they are
_VOWELS = frozenset("aeiouy")
# A plural after a hissing sound takes "-es", all of it the ending ("boxes" is "box" + "es"; left
# as "boxe" it missed "box"). Other "-es" words lose the "s" only ("cases" -> "case").
_SIBILANT_PLURALS = ("sses", "xes", "ches", "shes", "zzes")
_KEEP_DOUBLE = frozenset("lsz")  # "called" -> "call", "passed" -> "pass", "buzzed" -> "buzz"


def fold_inflection(word: str) -> str:
    """The word without its plural and -ing/-ed endings; other words unchanged."""
    if len(word) < MIN_LENGTH or not word.isalpha():
        return word
    return _without_verb_ending(_singular(word))


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > MIN_LENGTH:
        return word[:-3] + "y"  # "stories" -> "story"
    if word.endswith(_SIBILANT_PLURALS):
        return word[:-2]  # "classes" -> "class", "boxes" -> "box", "lunches" -> "lunch"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]  # "kids" -> "kid"; "glass", "bonus", "this" stay
    return word


def _without_verb_ending(word: str) -> str:
    if word.endswith("ied") and len(word) > MIN_LENGTH:
        return word[:-3] + "y"  # "studied" -> "study"
    for ending in ("ing", "ed"):
        if not word.endswith(ending) or word.endswith("eed"):
            continue  # "need", "agreed" keep their ending
        stem = word[: -len(ending)]
        # A stem needs a vowel and three letters: "thing", "sing", "red" are no inflections.
        if len(stem) < 3 or not _VOWELS & set(stem):
            return word
        if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in _KEEP_DOUBLE | _VOWELS:
            return stem[:-1]  # "swimming" -> "swim", "planned" -> "plan"
        return stem
    return word
