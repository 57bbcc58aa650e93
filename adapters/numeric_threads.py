"""`one_blas_thread`: NumPy's BLAS (OpenBLAS) multiplies on the calling thread, process-wide.

OpenBLAS splits a large product over a pool of threads of its own, and before any fork of
the process its fork handler waits for that pool. A fork made while another thread is in
such a product can wait for ever, holding the interpreter's lock: the whole process hangs.
The embedded PostgreSQL's commands are forked (not spawned) when the process runs as root
and the server as a user of its own, and the service loads and runs the multilingual
encoder (a NumPy model) on threads beside whatever forks: one such hang stopped a server's
start, and every process waiting on the embedded server's lock with it. The service runs
each model on one thread anyway (its ONNX sessions are single-threaded): the pool only adds
contention on the cores the requests share.
"""

from __future__ import annotations

import threading

_LOCK = threading.Lock()


def one_blas_thread() -> None:
    """Limits every BLAS library loaded in the process to one thread (NumPy's among them,
    once NumPy is imported: call it after). Safe to call again and from any thread."""
    from threadpoolctl import threadpool_limits

    with _LOCK:
        threadpool_limits(limits=1, user_api="blas")
