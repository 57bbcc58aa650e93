"""A setting of the whole process, changed while any block that needs it is open.

Rebuilds change process-wide settings of the interpreter (the collector's thresholds) for as
long as they run. Two rebuilds may overlap (the profile and
the review queue's, or a live follower's catch-up beside one): the setting is changed when the
first block opens and set back when the last one ends, to what the process had before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# Applies the setting and returns what sets it back.
Change = Callable[[], Callable[[], None]]


class ProcessWideSetting:
    """`held()` blocks, which may overlap and nest, keep the setting `change` applies."""

    def __init__(self, change: Change) -> None:
        self._change = change
        self._lock = threading.Lock()
        self._open = 0
        self._restore: Callable[[], None] | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._open == 0:
                self._restore = self._change()
            self._open += 1
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                if self._open == 0 and self._restore is not None:
                    self._restore()
                    self._restore = None
