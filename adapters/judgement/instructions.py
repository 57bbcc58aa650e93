"""`LearnedInstructionDetector`: the `InstructionDetector` port as one learned head over a
text's pieces (`piece_heads.PieceHead`): a text is judged by its most instruction-like
sentence, so an instruction tucked after a plain sentence is not averaged away. The head
ships in this package (`weights/instruction-head.npz`), its SHA-256 pinned here and checked
before use, and names the embedder it was trained over; it is trained in the lab
(`python -m factledger.bench.judgement instructions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from factledger.adapters.judgement.piece_heads import PieceHead, pieces_of
from factledger.application.memory.ports import Embedder

__all__ = ["HEAD", "PACKAGED_INSTRUCTION_HEAD", "LearnedInstructionDetector", "pieces_of"]

HEAD = "instruction"
PACKAGED_INSTRUCTION_HEAD = Path(__file__).parent / "weights" / "instruction-head.npz"
PACKAGED_INSTRUCTION_HEAD_SHA256 = (
    "c59f10b3e7b1578430244981783fba8a7127658cfe34bbd88a53ddb0816dd1a5"
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
