"""Graphs built at their first use, which a worker builds before its first item.

A served process builds some judgement graphs (the QA reader's, the span verifier's, a
cross-encoder's) when the first reading asks for them, not in the wave of loads that starts
once it is ready: building one imports the ONNX library, which holds the interpreter's lock for
about a second, and the requests served meanwhile waited behind it (ADR 0245). A `factledger
worker` serves no request, so there the wait only moved into its first items: the sync
benchmark's drain spent about 1.7 CPU seconds per worker process building them. Each such
graph registers how it is built (`built_at_first_use`), and the worker's warm-up builds them
all before it claims an item (`build_first_use_graphs`, ADR 0246). Since ADR 0247 a child
process prepares those graphs and the graph cache keeps them, so a build no longer imports the
library in the process that asks for it; what it still costs is the session's own build.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)

# Weak: a reader that a lab or a test made and dropped is not kept alive for a warm-up.
_BUILDS: list[tuple[str, weakref.WeakMethod[Callable[[], object]]]] = []
_LOCK = threading.Lock()


def built_at_first_use(build: Callable[[], object], name: str) -> None:
    """Registers `build`, a bound method that builds its object's graph once (later calls
    return what was built), as one the worker's warm-up runs; `name` says which model it is in
    the log."""
    with _LOCK:
        _BUILDS[:] = [(n, ref) for n, ref in _BUILDS if ref() is not None]
        _BUILDS.append((name, weakref.WeakMethod(build)))


def build_first_use_graphs() -> list[str]:
    """Runs every registered build still alive, on the calling thread, including those that
    registered while it ran (a verifier's load makes the cross-encoder it reads with). A build
    that fails is logged by its error's type and left to its first use, which meets the error
    as it would have without the warm-up. Returns the names of those that failed."""
    done: list[weakref.WeakMethod[Callable[[], object]]] = []
    failed: list[str] = []
    while True:
        with _LOCK:
            pending = [(n, ref) for n, ref in _BUILDS if not any(ref is d for d in done)]
        if not pending:
            return failed
        for name, ref in pending:
            done.append(ref)
            build = ref()
            if build is None:
                continue
            try:
                build()
            except Exception as exc:  # its first use meets it again, and decides what it costs
                log.warning("model.warm_up_failed", model=name, error=type(exc).__name__)
                failed.append(name)
