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
from collections.abc import Callable
from contextlib import AbstractContextManager

from factledger.projections.process_wide import ProcessWideSetting

YOUNG_THRESHOLD = 10_000


def _eased() -> Callable[[], None]:
    saved = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(YOUNG_THRESHOLD, saved[0]), saved[1], saved[2])

    def set_back() -> None:
        gc.set_threshold(*saved)
        gc.unfreeze()

    return set_back


_EASED = ProcessWideSetting(_eased)


def garbage_collection_eased() -> AbstractContextManager[None]:
    """The collector walks less while the block runs (several blocks may overlap)."""
    return _EASED.held()
