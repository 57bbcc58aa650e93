"""`MultilingualCloseness`: how close texts are to a sentence, read by the packaged
multilingual encoder (ADR 0200).

The judgement heads' encoder (all-MiniLM-L6-v2) reads English; a request to forget said in
German ("Bitte streichen Sie meinen alten Arbeitgeber") reads as close to nothing in
particular there, and was placed on whichever field happened to be closest. The multilingual
encoder (USE multilingual v3, sixteen languages in one space) reads that sentence at 0.40
against "employer" and 0.02 against "product version". It is the process's one encoder (the
screens and the answer judge load the same), loaded after ready: while it cannot load, a
reading raises `ModelUnavailableError`, and the sync holds the item and tries again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder


@dataclass(frozen=True, slots=True)
class MultilingualCloseness:
    """Implements `SentenceCloseness` over the multilingual encoder (rows L2-normalised)."""

    encoder: UseMultilingualEmbedder

    @classmethod
    def packaged(cls) -> MultilingualCloseness:
        return cls(UseMultilingualEmbedder(load_in_background=True))

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        rows = np.asarray(await self.encoder.embed([sentence, *texts]), dtype=np.float64)
        return [float(x) for x in rows[1:] @ rows[0]]  # the encoder's rows are unit length
