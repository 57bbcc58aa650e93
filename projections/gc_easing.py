"""The cyclic garbage collector eased while a rebuild runs.

A rebuild makes a page's events, their decrypted values and their view documents, tens of
thousands of container objects that stay alive for the page and are then freed by reference
counting (none of them is part of a cycle). With the collector's defaults a young collection
runs every 700 such objects and walks every one of them still alive, and the older collections
walk the whole heap of the process, over and over for objects that will never be cyclic garbage
(docs/benchmarks.md has the cost). During `garbage_collection_eased`, what the process held
before is frozen (out of every collection's walk, `gc.freeze`) and a young collection waits for
10,000 new objects; both are set back when the last block open in the process ends. Cyclic
garbage is still collected meanwhile, only less often.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000

_lock = threading.Lock()
_open = 0
_saved: tuple[int, int, int] = (700, 10, 10)


@contextmanager
def garbage_collection_eased() -> Iterator[None]:
    """The collector walks less while the block runs (several blocks may overlap)."""
    global _open, _saved
    with _lock:
        if _open == 0:
            _saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), _saved[1], _saved[2])
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                gc.set_threshold(*_saved)
                gc.unfreeze()
