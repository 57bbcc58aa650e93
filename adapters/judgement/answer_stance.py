"""`LearnedAnswerStance`: an `AnswerStanceReader` as one learned head over the packaged
embedder's vectors (ADR 0121).

An answer is read from its sentence, the sentence with the value taken out (the frame that
denies, asks or hedges it), the value, the field's words against the sentence, the sentence's
hashed character n-grams and the QA reader's margin over "no value". The head, its classes,
the embedder model it was fitted over and its bar are one `.npz` (`heads.Heads`'s format, the
head named `stance`, the bar as `field_min`), fitted by the lab on the labelled training
conversations (`python -m factledger.bench.judgement.stance`); its SHA-256 is checked before
a byte of it is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.features import Matrix, char_ngrams
from factledger.adapters.judgement.heads import Head, Heads
from factledger.adapters.judgement.qa_reader.inputs import field_words
from factledger.application.judgement.stance import ReaderAnswer, Stance, StanceReading
from factledger.application.memory.ports import Embedder

PACKAGED_ANSWER_STANCE = Path(__file__).parent / "weights" / "answer-stance.npz"
PACKAGED_ANSWER_STANCE_SHA256 = "8772da91d6646a3a4f7d49eb9bcb375496bad48e490e1cb58d2329d07ddc2710"
HEAD = "stance"
KEEPING = (Stance.STATES, Stance.HEDGED)
STANCE_BUCKETS = 512
MARGIN_SCALE = 10.0  # the reader's margins run from its floor (5.5) to about 15


def without_value(sentence: str, value: str) -> str:
    """The sentence with the value's words replaced by one placeholder word."""
    at = sentence.find(value) if value else -1
    if at < 0:
        return sentence
    return f"{sentence[:at]}it{sentence[at + len(value) :]}"


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


async def stance_features(embedder: Embedder, answers: Sequence[ReaderAnswer]) -> Matrix:
    """One row per answer (the lab fits on exactly these)."""
    n = len(answers)
    texts = [
        *(a.sentence for a in answers),
        *(without_value(a.sentence, a.value) for a in answers),
        *(a.value for a in answers),
        *(field_words(a.field) for a in answers),
    ]
    v = await embedder.embed(texts)
    sentence, frame, value, field = v[:n], v[n : 2 * n], v[2 * n : 3 * n], v[3 * n :]
    scalars = np.array([_scalars(a) for a in answers], dtype=np.float32).reshape(n, -1)
    cosines = np.stack(
        [(field * value).sum(1), (field * sentence).sum(1), (field * frame).sum(1)], axis=1
    )
    return np.hstack(
        [
            sentence,
            frame,
            value,
            field * sentence,
            field * value,
            char_ngrams([a.sentence for a in answers], STANCE_BUCKETS),
            cosines,
            scalars,
        ]
    ).astype(np.float32)


def readings(head: Head, x: Matrix, bar: float) -> list[StanceReading]:
    p = head.probabilities(x)
    keeping = [head.column(s.value) for s in KEEPING]
    out = []
    for row in p:
        states = float(row[keeping].sum())
        out.append(StanceReading(Stance(head.classes[int(row.argmax())]), states, states >= bar))
    return out


@dataclass(frozen=True, slots=True)
class LearnedAnswerStance:
    embedder: Embedder
    head: Head
    bar: float

    def __post_init__(self) -> None:
        missing = [s.value for s in KEEPING if s.value not in self.head.classes]
        if missing:
            raise ValueError(f"the stance head has no class {missing[0]}")

    @classmethod
    def load(cls, path: Path, sha256: str | None, embedder: Embedder) -> LearnedAnswerStance:
        heads = Heads.load(path, sha256, names=(HEAD,))
        if heads.model_id != embedder.model_id:
            raise ValueError(
                f"the stance head needs the embedder {heads.model_id}, not {embedder.model_id}"
            )
        return cls(embedder, heads[HEAD], heads.field_min)

    @classmethod
    def packaged(cls, embedder: Embedder) -> LearnedAnswerStance:
        return cls.load(PACKAGED_ANSWER_STANCE, PACKAGED_ANSWER_STANCE_SHA256, embedder)

    async def read(self, answers: Sequence[ReaderAnswer]) -> list[StanceReading]:
        if not answers:
            return []
        return readings(self.head, await stance_features(self.embedder, answers), self.bar)
