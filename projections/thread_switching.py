"""The interpreter's switch interval shortened while a follower reads ahead on a second thread.

A reading-ahead rebuild runs two threads of one interpreter: the main thread applies a page
while the read-ahead thread reads and decodes the next. Each waits for the database often (a
page's statements, the socket reads of the next page's rows), and when the database answers
the woken thread must take the interpreter's lock from the other, which gives it up only when
its switch interval (5 ms by default) runs out. A page meets that wait many times: the rows
of a page of long transcripts arrive in dozens of socket reads. During `quick_thread_switches`
the interval is `SWITCH_INTERVAL_S`; the interval the process had is set back when the last
block open in the process ends (docs/benchmarks.md has the figures).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SWITCH_INTERVAL_S = 0.0005

_lock = threading.Lock()
_open = 0
_saved = 0.005


@contextmanager
def quick_thread_switches() -> Iterator[None]:
    """Threads of this process take turns at the interpreter's lock every
    `SWITCH_INTERVAL_S` while the block runs (several blocks may overlap)."""
    global _open, _saved
    with _lock:
        if _open == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_INTERVAL_S, _saved))
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                sys.setswitchinterval(_saved)
