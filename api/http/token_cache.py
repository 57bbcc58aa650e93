"""`VerifiedTokens`: tokens this process has verified, by hash, until they expire.

Verifying a JWT (parse, base64, signature, claims) was the largest cost of a cheap request
after the framework's own. A token's verdict depends only on the token, the keys and the
clock; the keys are fixed for the verifier's life, and an entry is dropped at the token's
`exp` (or after `TTL_S`, whichever comes first), so a cached answer is the answer a fresh
verification would give. Refusals are never cached. Only a digest of the token is kept, not
the token. The map is cachetools' `TLRUCache` (least recently used first, each entry with its
own expiry), behind a lock since it is not thread-safe.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from threading import Lock
from typing import Generic, TypeVar

from cachetools import TLRUCache

TTL_S = 60.0
MAX_ENTRIES = 10_000
T = TypeVar("T")


class VerifiedTokens(Generic[T]):
    """A bounded LRU map of token digest -> (verdict, valid until)."""

    def __init__(
        self, *, ttl_s: float = TTL_S, max_entries: int = MAX_ENTRIES, clock: Callable[[], float]
    ) -> None:
        self._ttl_s, self._clock = ttl_s, clock
        self._entries: TLRUCache[bytes, tuple[T, float]] = TLRUCache(
            max_entries, _valid_until, timer=clock
        )
        self._lock = Lock()

    def get(self, token: str) -> T | None:
        with self._lock:
            entry = self._entries.get(_digest(token))
        return None if entry is None else entry[0]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def put(self, token: str, verdict: T, *, expires_at: float) -> None:
        valid_until = min(expires_at, self._clock() + self._ttl_s)
        with self._lock:
            self._entries[_digest(token)] = (verdict, valid_until)


def _valid_until(_: bytes, entry: tuple[object, float], __: float) -> float:
    return entry[1]


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def wall_clock() -> float:
    return time.time()
