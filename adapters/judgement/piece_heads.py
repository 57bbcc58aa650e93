"""`PieceHead`: one two-class head (a logistic regression over the packaged sentence embedder
and hashed character n-grams, the features the judgement heads read) read over a text's
pieces, a text being as likely as its likeliest piece, so that what a head looks for, tucked
after a plain sentence, is not averaged away. The learned screens of a subject's messages
(instructions to the agent, secrets) are such heads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import EmbedderMismatchError
from factledger.application.memory.ports import Embedder

# Sentences, roughly: enough to judge each on its own; a text's longest pieces are bounded.
_SENTENCE_END = re.compile(r"(?<=[.!?;:\n])\s+")
MAX_PIECES = 32
MAX_PIECE_CHARS = 600


def pieces_of(text: str) -> list[str]:
    """The text's sentences (the whole text when it has one), at most `MAX_PIECES`."""
    found = [p.strip()[:MAX_PIECE_CHARS] for p in _SENTENCE_END.split(text) if p.strip()]
    return found[:MAX_PIECES] or [text[:MAX_PIECE_CHARS]]


@dataclass(frozen=True, slots=True)
class PieceHead:
    """The head named `HEAD` of `heads`, over `embedder` (the model the head was fitted over)."""

    HEAD: ClassVar[str]
    embedder: Embedder
    heads: Heads

    def __post_init__(self) -> None:
        if self.embedder.model_id != self.heads.model_id:
            raise EmbedderMismatchError(
                f"the {self.HEAD} head needs the embedder {self.heads.model_id}, "
                f"not {self.embedder.model_id}"
            )

    @classmethod
    def shipped(cls, path: Path, sha256: str | None, embedder: Embedder | None) -> Self:
        """The head file `path` (checked against `sha256`; None: a deployment's own file, read
        as it is), over `embedder` (one already loaded) or the packaged default."""
        heads = Heads.load(path, sha256, (cls.HEAD,))
        return cls(embedder or cls.default_embedder(), heads)

    @classmethod
    def default_embedder(cls) -> Embedder:
        """The packaged model this kind of head is fitted over: the sentence embedder."""
        return OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET))

    async def piece_probabilities(self, pieces: Sequence[str]) -> Matrix:
        """Each piece's probability of the head's "true" class."""
        vectors = await self.embedder.embed(list(pieces))
        head = self.heads[self.HEAD]
        p: Matrix = head.probabilities(features(vectors, pieces, self.heads.buckets))
        return p[:, head.column("true")]

    async def most_likely_pieces(self, texts: Sequence[str]) -> list[float]:
        """Each text's likeliest piece's probability of the head's "true" class."""
        if not texts:
            return []
        split = [pieces_of(t) for t in texts]
        return likeliest(split, await self.piece_probabilities([p for s in split for p in s]))


def likeliest(split: Sequence[Sequence[str]], p: Matrix) -> list[float]:
    """Each text's highest piece probability, `p` holding its pieces' in order."""
    out, at = [], 0
    for pieces in split:
        out.append(float(p[at : at + len(pieces)].max()))
        at += len(pieces)
    return out
