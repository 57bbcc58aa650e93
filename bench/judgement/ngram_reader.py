"""A character n-gram reader of a reply and of the reply against its question (ADR 0140, lab).

A reader of another kind than the sentence encoders: a multinomial logistic regression over

- the reply's hashed character 1-4-grams (a one-word reply, a letter or an emoji is read by
  what its characters were labelled in the corpus, in whatever language it was written);
- the reply's length in words (binned);
- the reply against the question, with no word list: the share of the reply's words the
  question holds, a digit run the question does not hold, how many of the reply's longer
  words the question does not hold, and the reply's first word's n-grams when the reply
  carries something new (so a yes-word followed by another value can read apart from a bare
  yes-word; the first word itself counts as new when the question does not hold it, which
  ADR 0140 found reads down a yes followed by a clause in another language);
- the question's own last characters (how it was put: "...?", "...right?", an open question).

Numpy only. Trained on the training split of every writer's replies (`answers.kept_out`
keeps one question in five out, on which the bars are fitted).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.heads import Head
from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.fit import fit_head

CLASSES = ("yes", "no", "neither")
REPLY_BUCKETS = 4096
FIRST_WORD_BUCKETS = 512
QUESTION_BUCKETS = 256
NGRAM_SIZES = (1, 2, 3, 4)
LENGTH_BINS = (1, 2, 3, 5, 9)  # word counts up to and including each bin's edge
NEW_WORD_BINS = (0, 1, 2)  # new longer words: 0, 1, 2, 3 or more
LONG_WORD = 3  # letters from which a word of the reply counts as content
L2 = 1e-4  # chosen on the kept-out pairs among 1e-2, 3e-3, 1e-3, 1e-4, 1e-5 and 0
_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _hashed(text: str, sizes: Sequence[int], buckets: int) -> list[int]:
    padded = f" {text} "
    return [
        zlib.crc32(padded[i : i + n].encode()) % buckets
        for n in sizes
        for i in range(len(padded) - n + 1)
    ]


def _counts(indices: list[int], buckets: int) -> Matrix:
    row = np.bincount(indices, minlength=buckets).astype(np.float32) if indices else None
    if row is None:
        return np.zeros(buckets, dtype=np.float32)
    np.log1p(row, out=row)
    norm = float(np.linalg.norm(row))
    scaled: Matrix = row / max(norm, 1e-9)
    return scaled


def _one_hot(value: int, edges: Sequence[int]) -> list[float]:
    at = next((i for i, edge in enumerate(edges) if value <= edge), len(edges))
    return [1.0 if i == at else 0.0 for i in range(len(edges) + 1)]


def pair_row(question: str, reply: str) -> Matrix:
    """One pair's features (see the module's docstring)."""
    q, r = _normal(question), _normal(reply)
    q_words, r_words = set(_WORD.findall(q)), _WORD.findall(r)
    shared = sum(w in q_words for w in r_words) / max(len(r_words), 1)
    new_digits = any(d not in q for d in _DIGITS.findall(r))
    new_words = sum(len(w) >= LONG_WORD and w not in q_words for w in r_words)
    carries_new = new_digits or new_words > 0
    first = r_words[0] if r_words else r
    dense = [
        *_one_hot(len(r_words), LENGTH_BINS),
        shared,
        1.0 if new_digits else 0.0,
        *_one_hot(new_words, NEW_WORD_BINS),
        1.0 if not r_words else 0.0,  # no word at all: an emoji, a sign
    ]
    return np.concatenate(
        [
            _counts(_hashed(r, NGRAM_SIZES, REPLY_BUCKETS), REPLY_BUCKETS),
            _counts(_hashed(first, (2, 3), FIRST_WORD_BUCKETS), FIRST_WORD_BUCKETS)
            * (1.0 if carries_new else 0.0),
            _counts(_hashed(q[-6:], (2, 3), QUESTION_BUCKETS), QUESTION_BUCKETS) * 0.5,
            np.array(dense, dtype=np.float32),
        ]
    ).astype(np.float32)


def pair_features(pairs: Sequence[tuple[str, str]]) -> Matrix:
    width = REPLY_BUCKETS + FIRST_WORD_BUCKETS + QUESTION_BUCKETS + len(LENGTH_BINS) + 1 + 7
    if not pairs:
        return np.zeros((0, width), dtype=np.float32)
    return np.vstack([pair_row(q, r) for q, r in pairs])


@dataclass(frozen=True, slots=True)
class NgramReader:
    head: Head

    @classmethod
    def fit(cls, pairs: Sequence[LabelledPair], l2: float = L2) -> NgramReader:
        x = pair_features([(p.question, p.reply) for p in pairs])
        return cls(fit_head(x, [p.label for p in pairs], CLASSES, l2))

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> Matrix:
        """Each pair's probabilities in `CLASSES` order."""
        p = self.head.probabilities(pair_features(pairs))
        out: Matrix = p[:, [self.head.column(c) for c in CLASSES]]
        return out

    def save(self, path: Path, **bars: float) -> None:
        """The head, and any bars fitted for it (by name)."""
        arrays: dict[str, npt.NDArray[np.generic]] = {
            f"bar.{name}": np.array(value, dtype=np.float32) for name, value in bars.items()
        }
        arrays |= {"w": self.head.weights, "b": self.head.bias, "classes": np.array(CLASSES)}
        with path.open("wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]  # numpy types **kwds as allow_pickle

    @classmethod
    def load(cls, path: Path) -> tuple[NgramReader, dict[str, float]]:
        """The reader and the bars saved with it."""
        with np.load(path) as z:
            head = Head(z["w"], z["b"], tuple(str(c) for c in z["classes"]))
            bars = {k.removeprefix("bar."): float(z[k]) for k in z.files if k.startswith("bar.")}
        return cls(head), bars
