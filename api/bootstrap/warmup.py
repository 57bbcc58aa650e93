"""What a process starts once it serves: the deferred model loads and library imports.

A start to ready leaves three things for later: the embedding models' loads
(`start_deferred_loads`, ADR 0085), the libraries its modules import where first used
(`deferred_imports`) and the unpacking of the tuned answer readers' members (a tenth of a
second each, else paid by the first confirmation). Started the moment the runtime opened,
they ran on threads that took the interpreter's lock from the server's own start (binding
its socket) and from the first `/readyz`, which were then slower by what those threads held.
So they start once the process has answered its first ready `/readyz` (`start_after_ready`,
after the answer is sent), or `FALLBACK_S` after the runtime opened if nothing asks (a worker
has no HTTP): whichever comes first, once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from factledger.adapters.deferred_load import (
    DeferredLoad,
    finish_deferred_loads,
    start_deferred_loads,
)
from factledger.adapters.first_use import build_first_use_graphs
from factledger.adapters.numeric_threads import one_blas_thread
from factledger.api.bootstrap.deferred_imports import import_deferred, start_deferred_imports

# A process that no probe asks warms up this long after its runtime opened.
FALLBACK_S = 2.0

# One warm-up per process, as the deferred loads are the process's.
_STARTED = threading.Event()
_LOCK = threading.Lock()
# Set once what a first message needs (the deferred loads and imports) has loaded or failed:
# what only rarer requests need (the MCP SDK, the answer readers' members) starts after it,
# rather than share the interpreter's lock with it. Waited for at most this long.
_REQUEST_PATH_SETTLED = threading.Event()
REQUEST_PATH_WAIT_S = 10.0


def start_after_ready() -> None:
    """Starts the deferred loads and imports, on threads; later calls do nothing."""
    with _LOCK:
        if _STARTED.is_set():
            return
        _STARTED.set()
    # Before anything multiplies: a fork beside OpenBLAS's pool can hang (ADR 0189).
    one_blas_thread()
    loads = start_deferred_loads()
    imports = start_deferred_imports()
    start_answer_unpack(loads, imports)


def start_answer_unpack(
    loads: Sequence[DeferredLoad[Any]] = (), imports: threading.Thread | None = None
) -> None:
    """Unpacks the tuned answer readers' members on a daemon thread (nothing to tear down),
    once `loads` and `imports` have ended: a first message needs those, and only a
    confirmation's reply needs these, so they do not share the interpreter's lock. The same
    thread marks the request path settled (`request_path_settled`) before it unpacks."""

    def unpack_after() -> None:
        for load in loads:
            load.settled()
        if imports is not None:
            imports.join()
        _REQUEST_PATH_SETTLED.set()
        unpack_answers_now()

    threading.Thread(target=unpack_after, name="factledger-answer-unpack", daemon=True).start()


def unpack_answers_now() -> None:
    # Imported here, not with this module: the start to ready imports no judgement adapter.
    from factledger.api.bootstrap.judgement import unpack_answer_judges

    unpack_answer_judges()


def warm_up_now() -> None:
    """The same loads and imports, run to their end on the calling thread, and the graphs a
    served process builds at their first use (`build_first_use_graphs`): for a `factledger
    worker`, which answers no probe and would otherwise pay for them in its first items (about
    a second of CPU for the loads and lexicons and 1.5-1.7 s more for the graphs on the sync
    benchmark, most of a short backlog's drain). A load the fallback already started is waited
    for by its first use; the lexicons are read once either way."""
    with _LOCK:
        _STARTED.set()
    one_blas_thread()
    try:
        finish_deferred_loads()
        import_deferred()
    finally:
        _REQUEST_PATH_SETTLED.set()
    unpack_answers_now()
    build_first_use_graphs()


async def request_path_settled() -> None:
    """Returns once this process's deferred loads and imports have ended, loaded or failed
    (or after `REQUEST_PATH_WAIT_S`): what a served process loads for rarer requests waits
    for it."""
    await asyncio.to_thread(_REQUEST_PATH_SETTLED.wait, REQUEST_PATH_WAIT_S)


async def start_after_ready_async() -> None:
    """`start_after_ready` for a response's background task (no thread hop to start it)."""
    start_after_ready()


def schedule_fallback() -> asyncio.TimerHandle:
    """`start_after_ready` in `FALLBACK_S` on the running loop (cancel it on close)."""
    return asyncio.get_running_loop().call_later(FALLBACK_S, start_after_ready)
