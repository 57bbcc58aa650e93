"""`LiveViews`: an API process keeps its views following the log in a thread of its own.

Before, a process caught its views up only when something read them (read-your-writes on a
profile read): under a load of writes alone, nobody read and the views fell behind without
bound, and the first reader then paid for the whole backlog. The thread catches up after
each commit of this process (`wake`, a ledger `after_commit` listener) and polls for the
commits of others.

- A catch-up waits `settle_s` after the wake-up that started it, so that at hundreds of
  commits a second each view transaction takes tens of events instead of one (a page's
  documents are written together), at a cost of `settle_s` of lag.
- A failure (the view store away) is logged with its type and retried a poll later; a
  position moved by another process's follower means that one did the work.
- It runs beside the requests, never on the event loop.
"""

from __future__ import annotations

import threading

import structlog

from factledger.application.ledger.ports import PositionMovedError
from factledger.projections.follower import Follower

log = structlog.get_logger(__name__)


class LiveViews:
    """Runs `follower.catch_up()` on a daemon thread until `stop()`."""

    def __init__(self, follower: Follower, *, poll_s: float = 0.5, settle_s: float = 0.2) -> None:
        self._follower = follower
        self._poll_s, self._settle_s = poll_s, settle_s
        self._woken = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-views", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """A commit happened (any thread may call this)."""
        self._woken.set()

    def stop(self) -> None:
        self._stopping.set()
        self._woken.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stopping.is_set():
            if self._woken.wait(self._poll_s):
                self._stopping.wait(self._settle_s)
            self._woken.clear()
            if self._stopping.is_set():
                return
            if not self._catch_up():
                self._stopping.wait(self._poll_s)  # commits keep coming: back off anyway

    def _catch_up(self) -> bool:
        try:
            self._follower.catch_up()
        except PositionMovedError:
            pass  # another process's follower applied these events first
        except Exception as exc:  # the thread must outlive a store that is away
            log.warning("views.catch_up_failed", error=type(exc).__name__)
            return False
        return True
