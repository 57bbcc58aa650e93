"""`SearchesInFlight`: a mirror's load gives way to the searches of its process.

A load decodes and applies a namespace's rows on the event loop, holding the interpreter
while it does; a search whose round trip came back meanwhile waits for it. So the load waits
for the searches in flight to finish before its statement and before each slice of rows,
and runs in the gaps between them. Waiting is bounded (`MAX_WAIT_S` a step): under steady
traffic a load still advances a slice at a time rather than starving while it holds its
snapshot and a pooled connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

# How long a load's step waits for quiet at most; a 100-fact namespace loads in 4-5 steps.
MAX_WAIT_S = 0.05


class SearchesInFlight:
    """Counts the searches under way; `quiet` waits until there are none (bounded)."""

    def __init__(self, *, max_wait_s: float = MAX_WAIT_S) -> None:
        self.count = 0
        self._max_wait_s = max_wait_s
        self._none = asyncio.Event()
        self._none.set()

    @contextlib.contextmanager
    def searching(self) -> Iterator[None]:
        """Around one search."""
        self.count += 1
        self._none.clear()
        try:
            yield
        finally:
            self.count -= 1
            if not self.count:
                self._none.set()

    async def quiet(self) -> None:
        """Hands the loop back once, then waits until no search is under way or `max_wait_s`
        has passed, whichever comes first."""
        await asyncio.sleep(0)
        if self._none.is_set():
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._max_wait_s):
                await self._none.wait()
