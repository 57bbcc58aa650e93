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

import os
import sys
import threading

_LOCK = threading.Lock()


def one_blas_thread() -> None:
    """Limits the process's BLAS to one thread: the libraries already loaded (NumPy's, once
    NumPy is imported) at once, and those loaded later, and the child processes', through
    `OPENBLAS_NUM_THREADS`, which OpenBLAS reads when it loads. Safe to call again and from
    any thread."""
    with _LOCK:
        if os.environ.get("OPENBLAS_NUM_THREADS") != "1":  # written once: others may fork
            os.environ["OPENBLAS_NUM_THREADS"] = "1"
        if "numpy" not in sys.modules:
            return
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
