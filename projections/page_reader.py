"""Pages of the log read and decoded on a thread, several pages ahead of the one applied.

A PostgreSQL rebuild's page waits for the server (its documents' upsert, its position, its
commit) about as long as it takes to apply. With one page read ahead, the reading thread had
finished that page and stood idle through most of those waits, and so did the process's
Python; with a few pages queued it decodes during every wait (ADR 0044).

- Pages come in log order, each once, from the position given, until a short page (the end
  of the log as the thread found it).
- An error of the thread's read is raised by `next_page`, in the caller's thread, and ends
  the thread.
- `close` stops the thread and waits for it, whether or not every page was taken; pages read
  and not taken are dropped (a read changes nothing, so dropping one leaves nothing behind).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
# Pages waiting to be applied: enough to decode through several of a page's waits for the
# server, few enough that a rebuild holds a couple of thousand decoded events at most.
DEPTH = 4


class PageReader(Generic[Item]):
    """Calls `read(after)` on a thread, page after page, up to `depth` pages ahead;
    `position(item)` says where the next page starts after a page's last item."""

    def __init__(
        self,
        read: Callable[[int], Sequence[Item]],
        position: Callable[[Item], int],
        *,
        after: int,
        page: int,
        depth: int = DEPTH,
    ) -> None:
        self._read, self._position, self._page = read, position, page
        self._pages: queue.Queue[Sequence[Item] | BaseException] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(after,), name="factledger-read-ahead", daemon=True
        )
        self._thread.start()

    def next_page(self) -> Sequence[Item]:
        """The next page (short or empty at the end of the log); raises the read's error."""
        taken = self._pages.get()
        if isinstance(taken, BaseException):
            raise taken
        return taken

    def close(self) -> None:
        self._stop.set()
        while self._thread.is_alive():
            self._drop_waiting()  # a thread blocked on a full queue needs room to see the stop
            self._thread.join(0.01)
        self._drop_waiting()

    def _drop_waiting(self) -> None:
        try:
            while True:
                self._pages.get_nowait()
        except queue.Empty:
            pass

    def _run(self, after: int) -> None:
        while not self._stop.is_set():
            try:
                batch = self._read(after)
            except BaseException as exc:  # handed to the caller's thread, which raises it
                self._pages.put(exc)
                return
            self._pages.put(batch)
            if len(batch) < self._page:
                return
            after = self._position(batch[-1])
