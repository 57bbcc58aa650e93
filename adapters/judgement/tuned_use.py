"""`TunedUseAnswerJudge`: yes / no / neither of a reply to a question, read by the multilingual
encoder with its upper layers fine-tuned on labelled (question, reply) pairs.

The packaged encoder (USE multilingual v3, `UseMultilingualEmbedder`) is loaded as shipped;
its frozen word-piece table is shared, and what the tuning moved in its layers (the file's
deltas) is added to them in a copy of its numpy forward pass. The question and the reply
are embedded apart (the encoder was trained as a dual encoder on question-answer pairs),
and a linear head reads
[u, v, u*v, |u-v|] of their vectors. The file (`tuned_answers_file.py`) holds one or more
such tuned copies, whose readings are averaged, the yes threshold of that mean (`yes_min`,
chosen on kept-out questions as the lowest at which none of their replies that is not a yes
reads as one) and the encoder they were tuned from; its SHA-256 is checked before a byte of
it is used. No torch at run time:
`python -m factledger.bench.judgement tune-use` trains it in the lab.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.use_multilingual import (
    Encoder,
    package_layers,
    resources_dir,
    shared_encoder,
    tuned_encoder,
)
from factledger.adapters.judgement.cross_answers import decide
from factledger.adapters.judgement.cross_use import CrossEncoder, cross_features, rows_of
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.tuned_answers_file import TunedAnswers
from factledger.application.judgement.types import Reply

PACKAGED_TUNED_ANSWERS = Path(__file__).parent / "weights" / "answer-tuned-use.npz"
PACKAGED_TUNED_ANSWERS_SHA256 = "40883d6ae5f65a678f99b906ce6fc62f60909819eb4c5b31326e1f61d31c076c"


def pair_logits(u: Matrix, v: Matrix, weights: Matrix, bias: Matrix) -> Matrix:
    """The head's logits from the question's vectors `u` and the replies' `v`."""
    x = np.hstack([u, v, u * v, np.abs(u - v)]).astype(np.float32)
    out: Matrix = x @ weights + bias
    return out


def softmax(logits: Matrix) -> Matrix:
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    out: Matrix = e / e.sum(axis=1, keepdims=True)
    return out


class TunedUseAnswerJudge:
    """The `AnswerReader` over the tuned encoder. Its file is checked against its pin when the
    judge is made; the members are unpacked (a third of a second) and the packaged encoder
    loads (checked against its own pins) on the first reply read, in a worker thread, so a
    start pays only for the check. The encoder's table is shared."""

    def __init__(
        self, tuned: TunedAnswers | Callable[[], TunedAnswers], directory: Path | None = None
    ) -> None:
        self._tuned = tuned
        self.directory = directory if directory is not None else resources_dir()
        self._encoders: list[Encoder] = []
        self._cross: list[CrossEncoder] = []
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> TunedUseAnswerJudge:
        data = TunedAnswers.checked_bytes(path, sha256)
        return cls(partial(TunedAnswers.from_bytes, data, path.name))

    @property
    def tuned(self) -> TunedAnswers:
        with self._lock:
            if callable(self._tuned):
                self._tuned = self._tuned()
            return self._tuned

    def unpack(self) -> None:
        """Unpacks the members now (a process's warm-up) rather than on the first reply."""
        _ = self.tuned

    @classmethod
    def packaged(cls) -> TunedUseAnswerJudge:
        return cls.load(PACKAGED_TUNED_ANSWERS, PACKAGED_TUNED_ANSWERS_SHA256)

    def vectors(self, texts: Sequence[str]) -> list[Matrix]:
        """Each member's vectors of `texts`."""
        members = self.tuned.members
        with self._lock:
            if not self._encoders:
                self._encoders = [tuned_encoder(self.directory, m.deltas) for m in members]
        return [np.asarray(e.encode(list(texts)), dtype=np.float32) for e in self._encoders]

    def probabilities_sync(self, pairs: Sequence[tuple[str, str]]) -> Matrix:
        """Each pair's probabilities in `CLASSES` order, the mean of the members'; each
        distinct question encoded once."""
        if any(m.cross for m in self.tuned.members):
            return self._cross_probabilities(pairs)
        questions = sorted({q for q, _ in pairs})
        at = {q: i for i, q in enumerate(questions)}
        rows = [at[q] + len(pairs) for q, _ in pairs]
        texts = [*(r for _, r in pairs), *questions]
        readings = [
            softmax(pair_logits(v[rows], v[: len(pairs)], m.head_weights, m.head_bias))
            for m, v in zip(self.tuned.members, self.vectors(texts), strict=True)
        ]
        mean: Matrix = np.mean(readings, axis=0).astype(np.float32)
        return mean

    def cross_members(self) -> list[CrossEncoder]:
        members = self.tuned.members
        with self._lock:
            if not self._cross:
                base = package_layers(self.directory)
                eps = float(base["eps"])
                for m in members:
                    layers = {
                        k: (np.asarray(v, dtype=np.float32) + m.deltas.get(k, 0.0)).astype(
                            np.float32
                        )
                        for k, v in base.items()
                    }
                    self._cross.append(CrossEncoder(layers, m.cross, eps))
            return self._cross

    def _cross_probabilities(self, pairs: Sequence[tuple[str, str]]) -> Matrix:
        backend = shared_encoder(self.directory)
        encoders = self.cross_members()
        rows = {t: rows_of(backend, t) for pair in pairs for t in pair}
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        by_question: dict[str, list[int]] = {}
        for i, (q, _) in enumerate(pairs):
            by_question.setdefault(q, []).append(i)
        for q, at in by_question.items():
            readings = []
            for m, enc in zip(self.tuned.members, encoders, strict=True):
                x = cross_features(enc, rows[q], [rows[pairs[i][1]] for i in at])
                readings.append(softmax(x @ m.head_weights + m.head_bias))
            out[at] = np.mean(readings, axis=0)
        return out

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        if not pairs:
            return []
        p = await asyncio.to_thread(self.probabilities_sync, pairs)
        return decide(p, self.tuned.yes_min)
