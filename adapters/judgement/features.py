"""The features a head reads: the sentence's embedding and its hashed character n-grams.

The embedding carries meaning; the n-grams carry the short words an English-trained encoder
reads poorly ("ja", "nee", "não", "oui"), so a reply in another language is still judged by
what it says. Hashing uses CRC-32, so the features are the same in every process.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
NGRAM_SIZES = (2, 3, 4)


def char_ngrams(texts: Sequence[str], buckets: int) -> Matrix:
    """Counts of each text's character n-grams (words padded with spaces), hashed into
    `buckets` columns, log-scaled and L2-normalised."""
    out = np.zeros((len(texts), buckets), dtype=np.float32)
    for row, text in enumerate(texts):
        padded = f" {' '.join(text.lower().split())} "
        # Counted in one call: a numpy item update per n-gram was most of the judge's own time.
        out[row] = np.bincount(
            [
                zlib.crc32(padded[i : i + n].encode()) % buckets
                for n in NGRAM_SIZES
                for i in range(len(padded) - n + 1)
            ],
            minlength=buckets,
        )
    np.log1p(out, out=out)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    scaled: Matrix = out / np.maximum(norms, 1e-9)
    return scaled


def features(vectors: Matrix, texts: Sequence[str], buckets: int) -> Matrix:
    """One row per text: its embedding, then its n-grams."""
    return np.hstack([vectors.astype(np.float32), char_ngrams(texts, buckets)])
