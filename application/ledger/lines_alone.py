"""Which subjects have every transcript line sealed under a key of its own, as this process
has found them.

A subject whose sessions were all recorded with per-line keys never needs its key rotated
by a forget, and deleting line keys makes every forgotten line unreadable: the ledger's
check for old lines (`lines_not_erased`, and the rotation check each forget runs) can skip
both of its reads of the subject's stream. The answer never changes once found, either
way: sessions are recorded line by line since per-line keys, and a stored session is never
rewritten. So it is kept per subject (bounded), after the one read that finds it.
"""

from __future__ import annotations

import threading
from uuid import UUID

from cachetools import LRUCache

KNOWN_MAX = 100_000  # subjects: a few MB at most


class LinesAlone:
    """Per subject: True when every line is sealed alone, False when some session is stored
    whole or has lines in clear, None when this process has not looked. Safe across threads."""

    def __init__(self, known_max: int = KNOWN_MAX) -> None:
        self._known: LRUCache[UUID, bool] = LRUCache(known_max)
        self._lock = threading.Lock()

    def known(self, subject_id: UUID) -> bool | None:
        with self._lock:
            return self._known.get(subject_id)

    def found(self, subject_id: UUID, *, alone: bool) -> bool:
        with self._lock:
            self._known[subject_id] = alone
        return alone
