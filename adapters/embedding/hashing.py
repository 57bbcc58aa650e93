"""A deterministic, dependency-free `Embedder` for fast tests: signed feature hashing.

Texts that share words score high, texts that share none score zero. It understands no
synonyms, so it is for tests and demos where lexical overlap is what is being checked.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np

from factledger.application.memory.ports import Vectors

_TOKEN = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Bag of lower-cased words and word bigrams, hashed into `dimension` signed buckets.

    - The same text gives the same vector in every process (blake2b, not Python's `hash`).
    - Rows are L2-normalised; a text with no word maps to the zero vector (cosine 0 with all).
    """

    def __init__(self, dimension: int = 256) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self.dimension = dimension
        self.model_id = f"hashing-{dimension}"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _TOKEN.findall(text.lower())
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                bucket, sign = self._bucket(feature)
                out[row, bucket] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm > 0.0:
                out[row] /= norm
        return out

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dimension, 1.0 if (value >> 63) & 1 else -1.0
