"""`VectorCache`: the vectors of recently embedded texts, so a text met again is not run again.

The sync embeds the same short texts over and over (a fact said in many sessions, "prefers
to be called in the morning"), and with int8 activations every text is run alone
(`embedder`), so a text's vector never depends on what it was embedded beside: a cached
vector is bit for bit the one a new run would give.

- Keyed by a 16-byte BLAKE2b digest of the text: the cache never holds a text.
- Bounded (least recently used goes first: cachetools' `LRUCache`) and in process memory
  only, never written out.
- Safe to share between the threads that run inferences side by side.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Mapping

import numpy as np
from cachetools import LRUCache

DEFAULT_CAPACITY = 4_096  # 384 float32 each: ~6 MiB


def text_key(text: str) -> bytes:
    """The cache key of `text`."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class VectorCache:
    """Least-recently-used vectors by text key; a capacity of 0 keeps nothing."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        # cachetools refuses any entry in a cache of size 0: `put_many` keeps none then.
        self._vectors: LRUCache[bytes, np.ndarray] = LRUCache(max(1, capacity))
        self._lock = threading.Lock()
        self.hits = 0  # texts served from the cache, for tests and figures

    def __len__(self) -> int:
        return len(self._vectors)

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among `keys` (each one becomes the most recently used)."""
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for key in keys:
                vector = self._vectors.get(key)
                if vector is not None:
                    found[key] = vector
            self.hits += len(found)
        return found

    def put_many(self, vectors: Mapping[bytes, np.ndarray]) -> None:
        """Keeps copies of `vectors`, dropping the least recently used past capacity."""
        if self.capacity <= 0:
            return
        with self._lock:
            for key, vector in vectors.items():
                # A copy: a row of the caller's array would keep the whole array alive.
                self._vectors[key] = np.array(vector, dtype=np.float32, copy=True)
