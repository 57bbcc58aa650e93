"""`LearnedInstructionDetector`: the `InstructionDetector` port as one learned head over a
text's pieces (`piece_heads.PieceHead`): a text is judged by its most instruction-like
sentence, so an instruction tucked after a plain sentence is not averaged away. The head
ships in this package (`weights/instruction-head.npz`), its SHA-256 pinned here and checked
before use, and names the embedder it was trained over; it is trained in the lab
(`python -m factledger.bench.judgement instructions`).

`MultilingualInstructionDetector` is the same head over the packaged multilingual encoder,
fitted on the same lines and a writer's lines in other languages
(`weights/instruction-head-multilingual.npz`, `... instructions --encoder use`, ADRs 0201,
0202), and `BothEncodersInstructionDetector` reads each piece by the two, their log-odds
weighed (ADR 0205) or averaged: the screen the product runs by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.piece_heads import PieceHead, likeliest, pieces_of
from factledger.application.memory.ports import Embedder

__all__ = [
    "HEAD",
    "PACKAGED_INSTRUCTION_HEAD",
    "PACKAGED_WEIGHING",
    "BothEncodersInstructionDetector",
    "LearnedInstructionDetector",
    "MultilingualInstructionDetector",
    "Weighing",
    "pieces_of",
]

HEAD = "instruction"
PACKAGED_INSTRUCTION_HEAD = Path(__file__).parent / "weights" / "instruction-head.npz"
PACKAGED_INSTRUCTION_HEAD_SHA256 = (
    "c59f10b3e7b1578430244981783fba8a7127658cfe34bbd88a53ddb0816dd1a5"
)
PACKAGED_MULTILINGUAL_INSTRUCTION_HEAD = (
    Path(__file__).parent / "weights" / "instruction-head-multilingual.npz"
)
PACKAGED_MULTILINGUAL_INSTRUCTION_HEAD_SHA256 = (
    "948959ab5416fc782af0b756f957f3bbcfc672501231bd6ccea2a4c2cc822162"
)


class LearnedInstructionDetector(PieceHead):
    __slots__ = ()
    HEAD = HEAD

    @classmethod
    def packaged(cls, embedder: Embedder | None = None) -> LearnedInstructionDetector:
        """The shipped head, over `embedder` (one already loaded) or the packaged default."""
        return cls.shipped(PACKAGED_INSTRUCTION_HEAD, PACKAGED_INSTRUCTION_HEAD_SHA256, embedder)

    async def instruction_p(self, texts: Sequence[str]) -> list[float]:
        return await self.most_likely_pieces(texts)


class MultilingualInstructionDetector(LearnedInstructionDetector):
    """The same head fitted on the same lines over the packaged multilingual encoder (ADR
    0201): the English encoder reads a line in another language as close to nothing in
    particular, and an unfamiliar language's character n-grams weigh for the instruction."""

    __slots__ = ()

    @classmethod
    def packaged(cls, embedder: Embedder | None = None) -> MultilingualInstructionDetector:
        return cls.shipped(
            PACKAGED_MULTILINGUAL_INSTRUCTION_HEAD,
            PACKAGED_MULTILINGUAL_INSTRUCTION_HEAD_SHA256,
            embedder,
        )

    @classmethod
    def default_embedder(cls) -> Embedder:
        return UseMultilingualEmbedder(load_in_background=True)


class PieceReader(Protocol):
    """A head read sentence by sentence (`PieceHead`)."""

    async def piece_probabilities(self, pieces: Sequence[str]) -> Matrix: ...


@dataclass(frozen=True, slots=True)
class Weighing:
    """How much each head's log-odds count: `sigmoid(english * logit(p_english) + multilingual
    * logit(p_multilingual) + bias)` (ADR 0204)."""

    english: float
    multilingual: float
    bias: float

    def combined(self, english: Matrix, multilingual: Matrix) -> Matrix:
        z = (
            self.english * log_odds(english)
            + self.multilingual * log_odds(multilingual)
            + self.bias
        )
        out: Matrix = (1.0 / (1.0 + np.exp(-z))).astype(np.float32)
        return out


def log_odds(p: Matrix) -> Matrix:
    # A head's softmax can round to exactly 0 or 1 in float32.
    q = np.clip(p.astype(np.float64), 1e-7, 1 - 1e-7)
    out: Matrix = np.log(q / (1 - q))
    return out


# Fitted out of fold on the training lines, the bias then lowered until the screen withholds no
# more of the training writers' conversation lines than the mean did (ADR 0204):
# `python -m factledger.bench.judgement instructions --weighing --conversations
# bench/judgement/data/conversations`.
PACKAGED_WEIGHING = Weighing(english=0.4651, multilingual=1.5164, bias=-1.4003)


@dataclass(frozen=True, slots=True)
class BothEncodersInstructionDetector:
    """Each piece read by both heads, their log-odds weighed by `weighing` (ADR 0204; None:
    the mean of their probabilities, ADR 0201); a text as its likeliest piece."""

    english: PieceReader
    multilingual: PieceReader
    weighing: Weighing | None = PACKAGED_WEIGHING

    @classmethod
    def packaged(cls, embedder: Embedder | None = None) -> BothEncodersInstructionDetector:
        return cls(
            LearnedInstructionDetector.packaged(embedder),
            MultilingualInstructionDetector.packaged(),
        )

    async def instruction_p(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        split = [pieces_of(t) for t in texts]
        flat = [p for pieces in split for p in pieces]
        english = await self.english.piece_probabilities(flat)
        multilingual = await self.multilingual.piece_probabilities(flat)
        if self.weighing is not None:
            return likeliest(split, self.weighing.combined(english, multilingual))
        mean: Matrix = ((english + multilingual) / 2).astype(np.float32)
        return likeliest(split, mean)
