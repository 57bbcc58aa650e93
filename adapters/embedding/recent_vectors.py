"""`RecentVectors`: an `Embedder` that keeps the vectors of the last texts it embedded.

The session path's screens read a message's sentences one after the other over the same
multilingual encoder: the secret head, then the instruction head's second reading (ADR 0201).
The second finds the first's vectors here instead of encoding the same sentences again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from factledger.application.memory.ports import Embedder, Vectors

# A message is at most 32 pieces (`piece_heads.MAX_PIECES`); a few messages' worth is plenty.
KEPT = 128


class RecentVectors:
    """`inner`'s vectors, the last `kept` distinct texts' remembered (the encoder is
    deterministic, so a remembered vector is the one it would give again)."""

    def __init__(self, inner: Embedder, kept: int = KEPT) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.model_id = inner.model_id
        self._kept = kept
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        found = {t: self._recent[t] for t in texts if t in self._recent}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, await self.inner.embed(missing), strict=True))
        for text in dict.fromkeys(texts):
            self._recent[text] = found[text]
            self._recent.move_to_end(text)
        while len(self._recent) > self._kept:
            self._recent.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)
