"""`TunedUseAnswerJudge`: yes / no / neither of a reply to a question, read by the multilingual
encoder with its upper layers fine-tuned on labelled (question, reply) pairs.

The packaged encoder (USE multilingual v3, `UseMultilingualEmbedder`) is loaded as shipped;
its frozen word-piece table is shared, and the layers the file carries replace the package's
own in a copy of its numpy forward pass. The question and the reply are embedded apart (the
encoder was trained as a dual encoder on question-answer pairs), and a linear head reads
[u, v, u*v, |u-v|] of their vectors. The file (`.npz`) holds the tuned layers, the head, the
yes threshold (`yes_min`, chosen on kept-out questions as the lowest at which none of their
replies that is not a yes reads as one) and the encoder it was tuned from; its SHA-256 is
checked before a byte of it is used. No torch at run time:
`python -m factledger.bench.judgement tune-use` trains it in the lab.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.embedding.use_multilingual import (
    MODEL_ID,
    Encoder,
    resources_dir,
    tuned_encoder,
)
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.pinned_files import read_pinned
from factledger.application.judgement.types import Reply

CLASSES = (Reply.YES.value, Reply.NO.value, Reply.NEITHER.value)
ORDERS = ((2, 0), (3, 1), (5, 2))  # the n-gram branches: (order, tokens of left context)
_BRANCH_LAYERS = ("proj", "proj_b", "ln_g", "ln_b", "w1_", "b1_", "w2_", "b2_")
TOKEN_LAYERS = (*(f"{kind}{n}" for n, _ in ORDERS for kind in _BRANCH_LAYERS), "ln_g", "ln_b")
DAN_LAYERS = ("cnn_W", "cnn_b", "d0", "d1", "p1", "d2", "p3", "d3")
PACKAGED_TUNED_ANSWERS = Path(__file__).parent / "weights" / "answer-tuned-use.npz"
PACKAGED_TUNED_ANSWERS_SHA256 = "59a41357b0e97dee8220adceddafd4a6e68e4a010a1d8c86858f0fbe4e84707a"


class TunedAnswersIntegrityError(RuntimeError):
    """The tuned answer file is missing, differs from its pin, or is not one."""


@dataclass(frozen=True, slots=True)
class TunedAnswers:
    """What the trainer ships: the replaced layers, the pair head, the yes threshold."""

    layers: Mapping[str, Matrix]
    head_weights: Matrix  # (4 * 512, 3), columns in `CLASSES` order
    head_bias: Matrix
    yes_min: float
    base: str = MODEL_ID

    def to_bytes(self) -> bytes:
        arrays: dict[str, npt.NDArray[np.generic]] = {
            f"layer.{name}": np.asarray(value, dtype=np.float16)
            for name, value in self.layers.items()
        }
        arrays |= {
            "head.w": self.head_weights.astype(np.float32),
            "head.b": self.head_bias.astype(np.float32),
            "yes_min": np.array(self.yes_min),
            "classes": np.array(CLASSES),
            "base": np.array(self.base),
        }
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
        return buffer.getvalue()

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> TunedAnswers:
        data = read_pinned(path, sha256, TunedAnswersIntegrityError, "tuned answer file")
        return cls.from_bytes(data, path.name)

    @classmethod
    def from_bytes(cls, data: bytes, name: str) -> TunedAnswers:
        """A file's bytes, already checked against its pin."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                if tuple(str(c) for c in z["classes"]) != CLASSES or str(z["base"]) != MODEL_ID:
                    raise TunedAnswersIntegrityError(f"{name}: another encoder or classes")
                layers = {
                    k.removeprefix("layer."): z[k].astype(np.float32)
                    for k in z.files
                    if k.startswith("layer.")
                }
                unknown = set(layers) - {*TOKEN_LAYERS, *DAN_LAYERS}
                if unknown:
                    raise TunedAnswersIntegrityError(f"{name}: unknown layer {min(unknown)}")
                return cls(
                    layers,
                    z["head.w"].astype(np.float32),
                    z["head.b"].astype(np.float32),
                    float(z["yes_min"]),
                )
        except (KeyError, ValueError, OSError) as exc:
            raise TunedAnswersIntegrityError(f"{name}: not a tuned answer file") from exc


def holds_tuned_answers(path: Path, sha256: str | None) -> bool:
    """Whether a deployment's answer file (checked against its pin first) is a tuned encoder's
    rather than a pair head's; both are `.npz`."""
    data = read_pinned(path, sha256, TunedAnswersIntegrityError, "answer file")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return "head.w" in z.files
    except (ValueError, OSError):
        return False


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


def reading(p: Matrix, yes_min: float) -> list[Reply]:
    """A yes only when it is the likeliest reading and sure (`yes_min`); an unsure yes is
    neither (read as a no it would decline what the subject most likely confirmed)."""
    out = []
    for yes, no, neither in p:
        if yes >= max(no, neither):
            out.append(Reply.YES if yes >= yes_min else Reply.NEITHER)
        else:
            out.append(Reply.NO if no >= neither else Reply.NEITHER)
    return out


class TunedUseAnswerJudge:
    """The `AnswerReader` over the tuned encoder. The packaged encoder loads (and is checked
    against its pins) on the first reply read, in a worker thread; its table is shared."""

    def __init__(self, tuned: TunedAnswers, directory: Path | None = None) -> None:
        self.tuned = tuned
        self.directory = directory if directory is not None else resources_dir()
        self._encoder: Encoder | None = None
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> TunedUseAnswerJudge:
        return cls(TunedAnswers.load(path, sha256))

    @classmethod
    def packaged(cls) -> TunedUseAnswerJudge:
        return cls.load(PACKAGED_TUNED_ANSWERS, PACKAGED_TUNED_ANSWERS_SHA256)

    def vectors(self, texts: Sequence[str]) -> Matrix:
        with self._lock:
            if self._encoder is None:
                self._encoder = tuned_encoder(self.directory, self.tuned.layers)
        out: Matrix = np.asarray(self._encoder.encode(list(texts)), dtype=np.float32)
        return out

    def probabilities_sync(self, pairs: Sequence[tuple[str, str]]) -> Matrix:
        """Each pair's probabilities in `CLASSES` order; each distinct question once."""
        questions = sorted({q for q, _ in pairs})
        vectors = self.vectors([*(r for _, r in pairs), *questions])
        by_question = dict(zip(questions, vectors[len(pairs) :], strict=True))
        u = np.stack([by_question[q] for q, _ in pairs])
        head = (self.tuned.head_weights, self.tuned.head_bias)
        return softmax(pair_logits(u, vectors[: len(pairs)], *head))

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        if not pairs:
            return []
        p = await asyncio.to_thread(self.probabilities_sync, pairs)
        return reading(p, self.tuned.yes_min)
