"""`InFlightTexts`: texts being embedded right now, so a second caller waits for their vectors.

The sync applies several items side by side, each on its own thread; two of them often
embed the same text at once (a line said in every session, a fact stated twice), and both
miss the vector cache because neither run has finished. The first caller to claim a text runs
it; a caller that finds it claimed waits for that run's vector instead of running it again.
Every text still runs alone (`embedder`), so the shared vector is bit for bit the one a run of
its own would give.

- Keyed like the vector cache (a text's digest): it holds no text.
- A caller runs the texts it claimed before it waits for any other caller's, so two callers
  that each wait for the other's texts never wait for each other.
- A failed run passes its error to the callers waiting for its texts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class Claim:
    """The texts a caller must run (`mine`) and those another caller is running (`theirs`)."""

    mine: list[bytes]
    theirs: dict[bytes, Future[np.ndarray]] = field(default_factory=dict)


class InFlightTexts:
    """Futures of the vectors being computed, by text key; safe to share between threads."""

    def __init__(self) -> None:
        self._running: dict[bytes, Future[np.ndarray]] = {}
        self._lock = threading.Lock()
        self.shared = 0  # texts a caller got from another's run, for tests and figures

    def __len__(self) -> int:
        return len(self._running)

    def claim(self, keys: Iterable[bytes]) -> Claim:
        """Claims the keys no other caller is running; the caller must `settle` or `fail`
        every key of `Claim.mine`."""
        claim = Claim(mine=[])
        with self._lock:
            for key in keys:
                running = self._running.get(key)
                if running is None:
                    self._running[key] = Future()
                    claim.mine.append(key)
                else:
                    claim.theirs[key] = running
            self.shared += len(claim.theirs)
        return claim

    def settle(self, vectors: Mapping[bytes, np.ndarray]) -> None:
        """Hands the claimed keys' vectors to their waiters and releases the keys (the caller
        keeps them in its vector cache first, so a later caller finds them there)."""
        for key, future in self._released(vectors):
            future.set_result(vectors[key])

    def fail(self, keys: Iterable[bytes], error: BaseException) -> None:
        """Releases claimed keys whose run failed; their waiters get `error`."""
        for _, future in self._released(keys):
            future.set_exception(error)

    def _released(self, keys: Iterable[bytes]) -> list[tuple[bytes, Future[np.ndarray]]]:
        with self._lock:
            return [(key, self._running.pop(key)) for key in keys if key in self._running]
