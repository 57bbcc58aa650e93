"""The interpreter's switch interval shortened while a follower reads ahead on a second thread.

A reading-ahead rebuild runs two threads of one interpreter: the main thread applies a page
while the read-ahead thread reads and decodes the next. Each waits for the database often (a
page's statements, the socket reads of the next page's rows), and when the database answers
the woken thread must take the interpreter's lock from the other, which gives it up only when
its switch interval (5 ms by default) runs out. A page meets that wait several times (its
statements, its keys' read, the socket reads of its rows). During `quick_thread_switches`
the interval is `SWITCH_INTERVAL_S`; the interval the process had is set back when the last
block open in the process ends (docs/benchmarks.md has the figures).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager

from factledger.projections.process_wide import ProcessWideSetting

SWITCH_INTERVAL_S = 0.0005


def _quick() -> Callable[[], None]:
    saved = sys.getswitchinterval()
    sys.setswitchinterval(min(SWITCH_INTERVAL_S, saved))
    return lambda: sys.setswitchinterval(saved)


_QUICK = ProcessWideSetting(_quick)


def quick_thread_switches() -> AbstractContextManager[None]:
    """Threads of this process take turns at the interpreter's lock every
    `SWITCH_INTERVAL_S` while the block runs (several blocks may overlap)."""
    return _QUICK.held()
