"""`LearnedAnswerStance`: an `AnswerStanceReader` as two learned heads over the packaged
embedder's vectors (ADR 0121).

- The **stance** head reads what the sentence does with the value: states it, states it
  tentatively, denies it, asks, imagines, says it of someone else, or is small talk. It reads
  the sentence, the sentence with the value taken out (the frame that denies, asks or hedges
  it), the value and the sentence's hashed character n-grams; it is fitted on the labelled
  spans of the training conversations (what to propose, and what not to, with why).
- The **answer** head reads whether the words are that field's value at all: the field's
  words against the sentence and the value, and the QA reader's own scores (its margin over
  "no value", another field's reading of the same words, the field's best answer in the
  session); it is fitted on the QA reader's answers to the same conversations.

An answer is kept when both heads clear their bars. The heads, their classes, the embedder
model they were fitted over and the bars are one `.npz`, fitted by the lab (`python -m
factledger.bench.judgement.stance`); its SHA-256 is checked before a byte of it is used.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.features import Matrix, char_ngrams
from factledger.adapters.judgement.heads import Head
from factledger.adapters.judgement.qa_reader.inputs import field_words
from factledger.adapters.numpy_archives import open_archive
from factledger.adapters.pinned_files import read_pinned
from factledger.application.judgement.stance import ReaderAnswer, Stance, StanceReading
from factledger.application.memory.ports import Embedder

PACKAGED_ANSWER_STANCE = Path(__file__).parent / "weights" / "answer-stance.npz"
PACKAGED_ANSWER_STANCE_SHA256 = "cfcc135d0fb93c679269037827d76fc8c3e66ec4d6f29aa399496c66610d6568"
KEEPING = (Stance.STATES, Stance.HEDGED)
FIT_CLASSES = ("field", "other")
STANCE_BUCKETS = 512
MARGIN_SCALE = 10.0  # the reader's margins run from its floor (5.5) to about 15


class AnswerStanceIntegrityError(RuntimeError):
    """The stance file is missing, differs from its pinned SHA-256 or lacks a head."""


def without_value(sentence: str, value: str) -> str:
    """The sentence with the value's words replaced by one placeholder word."""
    at = sentence.find(value) if value else -1
    if at < 0:
        return sentence
    return f"{sentence[:at]}it{sentence[at + len(value) :]}"


@dataclass(frozen=True, slots=True)
class Vectors:
    """Each answer's sentence, frame, value and field words, embedded once for both heads."""

    sentence: Matrix
    frame: Matrix
    value: Matrix
    field: Matrix

    @classmethod
    async def of(cls, embedder: Embedder, answers: Sequence[ReaderAnswer]) -> Vectors:
        n = len(answers)
        texts = [
            *(a.sentence for a in answers),
            *(without_value(a.sentence, a.value) for a in answers),
            *(a.value for a in answers),
            *(field_words(a.field) or "-" for a in answers),
        ]
        # A session's answers share sentences and fields' words: each text is embedded once.
        unique = list(dict.fromkeys(texts))
        at = {text: row for row, text in enumerate(unique)}
        v = (await embedder.embed(unique)).astype(np.float32)[[at[t] for t in texts]]
        return cls(v[:n], v[n : 2 * n], v[2 * n : 3 * n], v[3 * n :])


def stance_features(v: Vectors, answers: Sequence[ReaderAnswer]) -> Matrix:
    """What the sentence does with the value, whatever the field (the lab fits on these)."""
    ngrams = char_ngrams([a.sentence for a in answers], STANCE_BUCKETS)
    return np.hstack([v.sentence, v.frame, v.value, ngrams]).astype(np.float32)


def _scalars(a: ReaderAnswer) -> list[float]:
    """The reader's own scores: its margin, how far another field's reading of the same
    words and this field's best answer in the session stand from it."""
    return [
        a.margin / MARGIN_SCALE,
        float(a.many),
        len(a.value) / max(len(a.sentence), 1),
        float(a.rival > 0.0),
        max(-1.0, min(1.0, (a.margin - a.rival) / MARGIN_SCALE)) if a.rival > 0.0 else 1.0,
        (a.best - a.margin) / MARGIN_SCALE,
        float(a.margin >= a.best),
    ]


def answer_features(v: Vectors, answers: Sequence[ReaderAnswer]) -> Matrix:
    """Whether the words are the field's value, by meaning and by the reader's scores."""
    scalars = np.array([_scalars(a) for a in answers], dtype=np.float32).reshape(len(answers), -1)
    cosines = np.stack(
        [
            (v.field * v.value).sum(1),
            (v.field * v.sentence).sum(1),
            (v.field * v.frame).sum(1),
        ],
        axis=1,
    )
    return np.hstack(
        [
            v.sentence,
            v.frame,
            v.value,
            v.field * v.sentence,
            v.field * v.value,
            char_ngrams([a.sentence for a in answers], STANCE_BUCKETS),
            cosines,
            scalars,
        ]
    ).astype(np.float32)


def keep_p(head: Head, x: Matrix, keeping: Sequence[str]) -> npt.NDArray[np.float64]:
    """Each row's probability of the `keeping` classes together."""
    p = head.probabilities(x)
    kept: npt.NDArray[np.float64] = p[:, [head.column(c) for c in keeping]].sum(axis=1)
    return kept.astype(np.float64)


@dataclass(frozen=True, slots=True)
class StanceHeads:
    stance: Head
    answer: Head
    model_id: str
    stance_bar: float  # the stance head's smallest probability of stating that keeps
    answer_bar: float  # the answer head's smallest probability of the field that keeps

    def save(self, path: Path) -> str:
        """Writes the file; returns its SHA-256, to pin."""
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "model_id": np.array(self.model_id),
            "stance_bar": np.array(self.stance_bar),
            "answer_bar": np.array(self.answer_bar),
        }
        for name, head in (("stance", self.stance), ("answer", self.answer)):
            arrays[f"{name}.w"], arrays[f"{name}.b"] = head.weights, head.bias
            arrays[f"{name}.classes"] = np.array(head.classes)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
        path.write_bytes(buffer.getvalue())
        return hashlib.sha256(buffer.getvalue()).hexdigest()

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> StanceHeads:
        data = read_pinned(path, sha256, AnswerStanceIntegrityError, "answer stance heads")
        with open_archive(data) as z:
            try:
                heads = {
                    n: Head(
                        z[f"{n}.w"].astype(np.float32),
                        z[f"{n}.b"].astype(np.float32),
                        tuple(str(c) for c in z[f"{n}.classes"]),
                    )
                    for n in ("stance", "answer")
                }
                model_id, bars = (
                    str(z["model_id"]),
                    (float(z["stance_bar"]), float(z["answer_bar"])),
                )
            except KeyError as exc:
                raise AnswerStanceIntegrityError(f"answer stance heads {path.name}") from exc
        missing = [s.value for s in KEEPING if s.value not in heads["stance"].classes]
        if missing or heads["answer"].classes != FIT_CLASSES:
            raise AnswerStanceIntegrityError(f"answer stance heads {path.name}: classes")
        return cls(heads["stance"], heads["answer"], model_id, *bars)

    def readings(self, v: Vectors, answers: Sequence[ReaderAnswer]) -> list[StanceReading]:
        xs = stance_features(v, answers)
        stances = self.stance.probabilities(xs)
        states = keep_p(self.stance, xs, [s.value for s in KEEPING])
        field = keep_p(self.answer, answer_features(v, answers), FIT_CLASSES[:1])
        out = []
        for n, row in enumerate(stances):
            stance = Stance(self.stance.classes[int(row.argmax())])
            if field[n] < self.answer_bar:
                stance = Stance.NONE
            kept = bool(states[n] >= self.stance_bar and field[n] >= self.answer_bar)
            out.append(StanceReading(stance, float(min(states[n], field[n])), kept))
        return out


@dataclass(frozen=True, slots=True)
class LearnedAnswerStance:
    embedder: Embedder
    heads: StanceHeads

    def __post_init__(self) -> None:
        if self.heads.model_id != self.embedder.model_id:
            raise ValueError(
                f"the stance heads need the embedder {self.heads.model_id}, "
                f"not {self.embedder.model_id}"
            )

    @classmethod
    def load(cls, path: Path, sha256: str | None, embedder: Embedder) -> LearnedAnswerStance:
        return cls(embedder, StanceHeads.load(path, sha256))

    @classmethod
    def packaged(cls, embedder: Embedder) -> LearnedAnswerStance:
        return cls.load(PACKAGED_ANSWER_STANCE, PACKAGED_ANSWER_STANCE_SHA256, embedder)

    async def read(self, answers: Sequence[ReaderAnswer]) -> list[StanceReading]:
        if not answers:
            return []
        return self.heads.readings(await Vectors.of(self.embedder, answers), answers)
