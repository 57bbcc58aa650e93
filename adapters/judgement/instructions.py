"""`LearnedInstructionDetector`: the `InstructionDetector` port as one learned head (a logistic
regression) over the packaged sentence embedder and hashed character n-grams, the features
the judgement heads read.

A text is split into sentences and judged by its most instruction-like one, so an instruction
tucked after a plain sentence is not averaged away. The head ships in this package
(`weights/instruction-head.npz`), its SHA-256 pinned here and checked before use, and names
the embedder it was trained over; it is trained in the lab
(`python -m factledger.bench.judgement instructions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement.features import features
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import EmbedderMismatchError
from factledger.application.memory.ports import Embedder

HEAD = "instruction"
PACKAGED_INSTRUCTION_HEAD = Path(__file__).parent / "weights" / "instruction-head.npz"
PACKAGED_INSTRUCTION_HEAD_SHA256 = (
    "c59f10b3e7b1578430244981783fba8a7127658cfe34bbd88a53ddb0816dd1a5"
)
# Sentences, roughly: enough to judge each on its own; a text's longest pieces are bounded.
_SENTENCE_END = re.compile(r"(?<=[.!?;:\n])\s+")
MAX_PIECES = 32
MAX_PIECE_CHARS = 600


def pieces_of(text: str) -> list[str]:
    """The text's sentences (the whole text when it has one), at most `MAX_PIECES`."""
    found = [p.strip()[:MAX_PIECE_CHARS] for p in _SENTENCE_END.split(text) if p.strip()]
    return found[:MAX_PIECES] or [text[:MAX_PIECE_CHARS]]


@dataclass(frozen=True, slots=True)
class LearnedInstructionDetector:
    embedder: Embedder
    heads: Heads

    def __post_init__(self) -> None:
        if self.embedder.model_id != self.heads.model_id:
            raise EmbedderMismatchError(
                f"the instruction head needs the embedder {self.heads.model_id}, "
                f"not {self.embedder.model_id}"
            )

    @classmethod
    def packaged(cls, embedder: Embedder | None = None) -> LearnedInstructionDetector:
        """The shipped head, over `embedder` (one already loaded) or the packaged default."""
        heads = Heads.load(PACKAGED_INSTRUCTION_HEAD, PACKAGED_INSTRUCTION_HEAD_SHA256, (HEAD,))
        return cls(embedder or OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET)), heads)

    async def instruction_p(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        split = [pieces_of(t) for t in texts]
        flat = [p for pieces in split for p in pieces]
        vectors = await self.embedder.embed(flat)
        head = self.heads[HEAD]
        p = head.probabilities(features(vectors, flat, self.heads.buckets))[:, head.column("true")]
        out, at = [], 0
        for pieces in split:
            out.append(float(p[at : at + len(pieces)].max()))
            at += len(pieces)
        return out
