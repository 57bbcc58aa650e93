"""`RemovalAcknowledgementHead`: how likely an agent's line tells the subject that something
they said or gave was removed, deleted, taken off or will not be kept ("Brilliant news!
Osteria Lume removed from your profile.", "C'est fait, je l'ai retiré de votre dossier.").

One learned head over a line's pieces (`piece_heads.PieceHead`), read over the packaged
multilingual encoder (agents answer in the subject's language) and hashed character n-grams,
a line as likely as its likeliest sentence, so an acknowledgement after a booking confirmed
is not averaged away. It lifts a sentence of the subject's line before it that the forget
flag already leans to ask (`application.review.forget_requests`, ADR 0206); it never makes a
request of its own. The head ships in this package (`weights/removal-ack-head.npz`), its
SHA-256 pinned here and checked before use; it is fitted in the lab (`python -m
factledger.bench.judgement acknowledgements`), and a deployment refits it the same way on its
own labelled lines.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.piece_heads import PieceHead, likeliest, pieces_of
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.memory.ports import Embedder

HEAD = "removal_ack"
ACK_QUESTION = "removal acknowledged"  # the tuned reader's first segment, as it was trained
PACKAGED_REMOVAL_ACK_HEAD = Path(__file__).parent / "weights" / "removal-ack-head.npz"
PACKAGED_REMOVAL_ACK_HEAD_SHA256 = (
    "b25c011b7559a2e54dbe49860d2c83e2e1cf983a4f36712c20b87ca02c63fc27"
)


class RemovalAcknowledgementHead(PieceHead):
    __slots__ = ()
    HEAD = HEAD

    @classmethod
    def packaged(cls, embedder: Embedder | None = None) -> RemovalAcknowledgementHead:
        """The shipped head, over `embedder` or the packaged multilingual encoder (loaded in
        the background: `UseMultilingualEmbedder`)."""
        return cls.shipped(PACKAGED_REMOVAL_ACK_HEAD, PACKAGED_REMOVAL_ACK_HEAD_SHA256, embedder)

    @classmethod
    def default_embedder(cls) -> Embedder:
        return UseMultilingualEmbedder(load_in_background=True)

    async def acknowledged(self, lines: Sequence[str]) -> list[float]:
        return await self.most_likely_pieces(lines)


PACKAGED_REMOVAL_ACK_READER = Path(__file__).parent / "weights" / "removal-ack-reader-use.npz"
PACKAGED_REMOVAL_ACK_READER_SHA256 = (
    "02901d6458bdd75bfe985af9605f883dc297ddeb1fbf6bc175ff23b1ee071e32"
)


class TunedAcknowledgementReader:
    """The packaged multilingual encoder with its upper layers tuned on (`ACK_QUESTION`,
    line) pairs (`TunedUseAnswerJudge`'s file format), a line as likely as its likeliest
    sentence; its reading moved so that its file's threshold (`yes_min`, chosen on kept-out
    lines) reads as 0.5, the bar the lift holds every reader to."""

    def __init__(self, model: TunedUseAnswerJudge) -> None:
        self._model = model

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> TunedAcknowledgementReader:
        return cls(TunedUseAnswerJudge.load(path, sha256))

    @classmethod
    def packaged(cls) -> TunedAcknowledgementReader:
        """The shipped reader (ADR 0207), checked against its pin."""
        return cls.load(PACKAGED_REMOVAL_ACK_READER, PACKAGED_REMOVAL_ACK_READER_SHA256)

    async def acknowledged(self, lines: Sequence[str]) -> list[float]:
        if not lines:
            return []
        return await asyncio.to_thread(self.acknowledged_sync, lines)

    def acknowledged_sync(self, lines: Sequence[str]) -> list[float]:
        split = [pieces_of(line) for line in lines]
        pieces = [p for s in split for p in s]
        yes = self._model.probabilities_sync([(ACK_QUESTION, p) for p in pieces])[:, 0]
        bar = self._model.tuned.yes_min
        return likeliest(split, np.array([_at_half(float(p), bar) for p in yes]))


def _at_half(p: float, bar: float) -> float:
    """`p` moved on the log-odds scale so that `bar` reads 0.5."""
    q, b = min(max(p, 1e-7), 1 - 1e-7), min(max(bar, 1e-7), 1 - 1e-7)
    z = math.log(q / (1 - q)) - math.log(b / (1 - b))
    return 1.0 / (1.0 + math.exp(-z))
