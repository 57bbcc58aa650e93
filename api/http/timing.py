"""Where a request's time in the app went: its use case, its idempotency record, the rest.

The request context middleware opens a `RequestTiming` per request; `Idempotency.run` times
the command it runs (`use`: the use case and the answer it builds) and the claim and saved
response around it (`idem`: durable writes of their own). The response then says all three,
`Server-Timing: app;dur=<ms>, use;dur=<ms>, idem;dur=<ms>`, so what a request costs outside
its work (routing, auth, the subject check, validation, serialisation) is measured on every
request: app - use - idem.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

USE_CASE = "use"
IDEMPOTENCY = "idem"


@dataclass(slots=True)
class RequestTiming:
    """Seconds spent so far per timed part of the request."""

    parts: dict[str, float] = field(default_factory=dict)

    def add(self, part: str, seconds: float) -> None:
        self.parts[part] = self.parts.get(part, 0.0) + seconds

    def header(self, in_app_s: float) -> bytes:
        entries = [f"app;dur={in_app_s * 1e3:.2f}"]
        entries.extend(f"{name};dur={s * 1e3:.2f}" for name, s in self.parts.items())
        return ", ".join(entries).encode()


# A mutable holder, not a value: tasks and threads copy the context, and the holder they
# see is still the request's own.
_CURRENT: ContextVar[RequestTiming | None] = ContextVar("request_timing", default=None)


def begin_request() -> RequestTiming:
    timing = RequestTiming()
    _CURRENT.set(timing)
    return timing


@contextmanager
def timed(part: str) -> Iterator[None]:
    """Adds the block's duration to `part` of the current request (a no-op outside one)."""
    timing = _CURRENT.get()
    started = time.perf_counter()
    try:
        yield
    finally:
        if timing is not None:
            timing.add(part, time.perf_counter() - started)
