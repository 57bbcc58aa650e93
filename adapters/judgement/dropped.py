"""`LearnedDroppedReader`: which held items of a list a subject's sentence says no longer hold.

"The cardiologist took me off the aspirin" drops the aspirin; "my husband stopped his
aspirin", "I might stop the aspirin" and "off the aspirin for a week before the surgery" do
not. Which one a sentence says is a judgement of its words around the item, in any of the
languages people use, so it is learned, not listed (ADR 0159):

- a held item is read against a sentence only when the sentence names it: one of the item's
  words (those the stopword library does not list as function words of the seven languages)
  is a word of the sentence, or shares its first five letters with one ("Lumenly's");
- a pair model reads ("medications: aspirin", the sentence with the item's words in
  brackets) and gives the probability that the sentence drops the item (its `yes` class):
  all-MiniLM-L6-v2 fine-tuned as a cross-encoder (int8 ONNX, read like the answer
  cross-encoder, `cross_answers`), or the packaged multilingual encoder tuned as one (`.npz`,
  read like the tuned answer judge, `tuned_use`); `dropped_min`, the file's threshold, was
  chosen on training items kept out of the fit.

No model ships: the one trained on the project's items failed ADR 0159's adoption rule on a
writer it never read, so a deployment that turns removals on trains its own (`python -m
factledger.bench.judgement.dropped fit`, on the project's items and its own) and pins it; the
file's SHA-256 is checked before a byte of it is used.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
from stopwords import get_stopwords

from factledger.adapters.judgement.cross_answers import (
    CLASSES,
    CrossAnswerJudge,
    CrossEncoderIntegrityError,
)
from factledger.adapters.judgement.tuned_answers_file import TunedAnswersIntegrityError
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.judgement.types import Reply
from factledger.application.memory.sameness import tokens
from factledger.application.proposals.dropped import DroppedItem, HeldList

PREFIX = 5  # letters two words share to name one thing ("Lumenly", "Lumenly's")
WORD = re.compile(r"\w[\w'\u2019-]*")
# The languages whose function words never name an item (the stopword library's lists).
LANGUAGES = ("en", "fr", "es", "de", "it", "pt", "nl")


class DroppedHeadIntegrityError(RuntimeError):
    """The dropped-items model's file is missing, differs from its pin, or does not name its
    outputs and threshold."""


@cache
def _function_words() -> frozenset[str]:
    return frozenset(t for lang in LANGUAGES for w in get_stopwords(lang) for t in tokens(w))


def item_words(item: str) -> frozenset[str]:
    """The words that name an item: its words less function words, numbers and letters
    alone."""
    common = _function_words()
    return frozenset(
        t for t in tokens(item) if len(t) > 2 and not t.startswith("#") and t not in common
    )


def _names(word: str, named: frozenset[str]) -> bool:
    if word in named:
        return True
    return len(word) >= PREFIX and any(
        len(n) >= PREFIX and n[:PREFIX] == word[:PREFIX] for n in named
    )


def names(sentence: str, item: str) -> bool:
    """Whether `sentence` names `item` (see the module)."""
    return _named_in(tokens(sentence), item_words(item))


def _named_in(words: Sequence[str], named: frozenset[str]) -> bool:
    return bool(named) and any(_names(w, named) for w in words)


def marked(sentence: str, item: str) -> str:
    """The sentence with the words that name `item` in brackets, so the reading is of what
    is said of that item, not of another one the sentence drops ("Calyx is out" beside a
    held "HubStar")."""
    named = item_words(item)

    def mark(word: re.Match[str]) -> str:
        text = word.group(0)
        return f"[{text}]" if any(_names(t, named) for t in tokens(text)) else text

    return WORD.sub(mark, sentence)


def pair_of(field: str, item: str, sentence: str) -> tuple[str, str]:
    """The cross-encoder's pair: the item under its field's name, and the sentence with the
    item's words marked."""
    return f"{field.replace('_', ' ')}: {item}", marked(sentence, item)


class PairModel(Protocol):
    """A reader of (question, reply) pairs in the answer classes' order (`CLASSES`)."""

    def probabilities_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]: ...


@dataclass(frozen=True, slots=True)
class LearnedDroppedReader:
    """The `DroppedItemsReader` of the product: a fine-tuned pair model and its threshold."""

    model: PairModel
    dropped_min: float

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> LearnedDroppedReader:
        """An int8 ONNX cross-encoder (`.onnx`, its threshold in its metadata) or the
        multilingual encoder tuned as one (`.npz`, ADR 0117's reading; its threshold in the
        file), checked against `sha256`."""
        try:
            if path.suffix == ".npz":
                tuned = TunedUseAnswerJudge.load(path, sha256)
                return cls(tuned, tuned.tuned.yes_min)
            cross = CrossAnswerJudge.load(path, sha256)
            return cls(cross, cross.yes_min)
        except (CrossEncoderIntegrityError, TunedAnswersIntegrityError) as exc:
            raise DroppedHeadIntegrityError(str(exc)) from exc

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Each (field: item, sentence) pair's probability that the sentence drops the item."""
        yes = CLASSES.index(Reply.YES.value)
        return [float(p[yes]) for p in self.model.probabilities_sync(pairs)] if pairs else []

    def dropped_sync(
        self, lists: Sequence[HeldList], sentences: Sequence[str]
    ) -> list[DroppedItem]:
        said = [tokens(sentence) for sentence in sentences]
        asked = [
            DroppedItem(held.field, item, index)
            for held in lists
            for item, named in ((i, item_words(i)) for i in held.items)
            for index, words in enumerate(said)
            if _named_in(words, named)
        ]
        p = self.probabilities([pair_of(d.field, d.item, sentences[d.sentence]) for d in asked])
        return [d for d, pd in zip(asked, p, strict=True) if pd >= self.dropped_min]

    async def dropped(
        self, lists: Sequence[HeldList], sentences: Sequence[str]
    ) -> list[DroppedItem]:
        # A model run per named item, off the event loop (which may be the server's).
        return await asyncio.to_thread(self.dropped_sync, lists, sentences)
