"""English verb agreement for the confirmation question, from `lemminflect`'s tables.

A model's note about the subject is in the third person ("manages a team of 12"); said to
the subject, its first verb takes the second person ("you manage a team of 12"). Which words
are verbs, their lemma and their forms all come from the library (MIT; its tables ship in
the wheel and load from it), so any verb is turned, not only the ones someone listed.
"""

from __future__ import annotations

from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

_VERB_KINDS = ("VERB", "AUX")
_NEGATION = "n't"
_BE = "be"  # the one verb negated by "not" after it rather than by "do not" before it


def _lemmas(word: str) -> tuple[str, ...]:
    found = getAllLemmas(word.lower())
    return tuple(dict.fromkeys(lemma for kind in _VERB_KINDS for lemma in found.get(kind, ())))


def _modal(lemma: str) -> bool:
    """A modal ("will", "may", "can") has no present form of its own to agree."""
    return "AUX" in getAllLemmas(lemma) and not getInflection(lemma, "VBP")


@lru_cache(maxsize=4096)
def second_person(word: str) -> str | None:
    """`works` -> `work`, `is` -> `are`, `was` -> `were`, `doesn't` -> `don't`, a modal as it
    is; None when `word` is not a third-person verb form."""
    lower = word.lower()
    if lower.endswith(_NEGATION) and len(lower) > len(_NEGATION):
        turned = second_person(lower[: -len(_NEGATION)])
        return None if turned is None else turned + _NEGATION
    for lemma in _lemmas(lower):
        if lower in getInflection(lemma, "VBZ"):
            present: tuple[str, ...] = getInflection(lemma, "VBP")
            return present[-1] if present else None
        past: tuple[str, ...] = getInflection(lemma, "VBD")
        if len(past) > 1 and lower == past[0]:
            return past[-1]  # "was" -> "were"
        if _modal(lemma) and lower in (lemma, *past):
            return lower
    return None


def is_adverb(word: str) -> bool:
    """An adverb that may stand before a note's verb ("no longer", "still", "never")."""
    return "ADV" in getAllLemmas(word.lower()) and second_person(word) is None


def said_of_you(verb: str, *, true: bool) -> str | None:
    """A boolean field's verb (`has`, `is`, `uses`, `can`) said of "you": `have` / `do not
    have`, `are` / `are not`, `can` / `cannot`; None when `verb` is no third-person verb."""
    form = second_person(verb)
    if form is None:
        return None
    if true:
        return form
    lemmas = _lemmas(verb)
    if any(_modal(lemma) for lemma in lemmas):
        return f"{form}not" if form == "can" else f"{form} not"
    if _BE in lemmas:
        return f"{form} not"
    return f"do not {form}"
