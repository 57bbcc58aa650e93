"""`LearnedSecretDetector`: the `SecretDetector` port as one learned head over a text's
pieces (`piece_heads.PieceHead`), read over the packaged multilingual encoder (USE
multilingual v3: sixteen languages in one space, the encoder the answer judge loads) and
hashed character n-grams: how likely a message discloses a usable secret (a password,
a PIN, a one-time code, a door or alarm code, a key, a recovery phrase, a security answer) in
any language and wording, where the detectors (`adapters/safety/detectors.py`) know formats
and a source-code detector's English words only (ADR 0185). The head ships in this package
(`weights/secret-head.npz`), its SHA-256 pinned here and checked before use, and names the
embedder it was fitted over; it is fitted in the lab (`python -m factledger.bench.judgement
secrets`), and a deployment refits it on its own labelled messages the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.piece_heads import PieceHead
from factledger.application.memory.ports import Embedder

HEAD = "secret"
PACKAGED_SECRET_HEAD = Path(__file__).parent / "weights" / "secret-head.npz"
# A file's checksum; the linter reads "SECRET" in its name as a password's.
PACKAGED_SECRET_HEAD_SHA256 = "0f02779dbe85018883433197dd868baa35e63e8e5e7926f5d47c99788ee743a0"  # noqa: S105


class LearnedSecretDetector(PieceHead):
    __slots__ = ()
    HEAD = HEAD

    @classmethod
    def packaged(cls, embedder: Embedder | None = None) -> LearnedSecretDetector:
        """The shipped head, over `embedder` or the packaged multilingual encoder (loaded in
        the background: `UseMultilingualEmbedder`)."""
        return cls.shipped(PACKAGED_SECRET_HEAD, PACKAGED_SECRET_HEAD_SHA256, embedder)

    @classmethod
    def default_embedder(cls) -> Embedder:
        return UseMultilingualEmbedder(load_in_background=True)

    async def secret_p(self, texts: Sequence[str]) -> list[float]:
        return await self.most_likely_pieces(texts)
