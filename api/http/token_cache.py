"""`VerifiedTokens`: tokens this process has verified, by hash, until they expire.

Verifying a JWT (parse, base64, signature, claims) was the largest cost of a cheap request
after the framework's own. A token's verdict depends only on the token, the keys and the
clock; the keys are fixed for the verifier's life, and an entry is dropped at the token's
`exp` (or after `TTL_S`, whichever comes first), so a cached answer is the answer a fresh
verification would give. Refusals are never cached. Only a digest of the token is kept, not
the token.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from threading import Lock
from typing import Generic, TypeVar

TTL_S = 60.0
MAX_ENTRIES = 10_000
T = TypeVar("T")


class VerifiedTokens(Generic[T]):
    """A bounded LRU map of token digest -> (verdict, valid until)."""

    def __init__(
        self, *, ttl_s: float = TTL_S, max_entries: int = MAX_ENTRIES, clock: Callable[[], float]
    ) -> None:
        self._ttl_s, self._max, self._clock = ttl_s, max_entries, clock
        self._entries: OrderedDict[bytes, tuple[T, float]] = OrderedDict()
        self._lock = Lock()

    def get(self, token: str) -> T | None:
        digest = _digest(token)
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                return None
            verdict, valid_until = entry
            if self._clock() >= valid_until:
                del self._entries[digest]
                return None
            self._entries.move_to_end(digest)
            return verdict

    def put(self, token: str, verdict: T, *, expires_at: float) -> None:
        valid_until = min(expires_at, self._clock() + self._ttl_s)
        with self._lock:
            self._entries[_digest(token)] = (verdict, valid_until)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def wall_clock() -> float:
    return time.time()
