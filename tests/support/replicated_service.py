"""The environment of `factledger serve` and `factledger worker` processes whose every store is
on a replicated PostgreSQL (`factledger.testing.replication`): writes through the multi-host
URL that accepts only the primary, reads (optionally) from the standby."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from support.serve_process import serve_env

WORKER_STOP_LIMIT_S = 20.0
# Opening a worker's runtime loads its models: slow on a shared machine.
WORKER_START_LIMIT_S = 120.0


def replicated_env(
    data_dir: Path, url: str, *, read_url: str | None = None, suffix: str = "r"
) -> dict[str, str]:
    """Every store on PostgreSQL (ledger, views, short-term memory, sync queue, pgvector), with
    short waits so that a lost primary costs a quick 503, not a queue of stalled requests."""
    extra = {
        "FACTLEDGER_DATABASE_URL": url,
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_EVENT_STORE__SCHEMA_NAME": f"ledger_{suffix}",
        "FACTLEDGER_VIEWS__KIND": "postgres",
        "FACTLEDGER_VIEWS__SCHEMA_NAME": f"views_{suffix}",
        "FACTLEDGER_SHORT_TERM__KIND": "postgres",
        "FACTLEDGER_SHORT_TERM__SCHEMA_NAME": f"short_{suffix}",
        "FACTLEDGER_SYNC__STORE__KIND": "postgres",
        "FACTLEDGER_SYNC__STORE__SCHEMA_NAME": f"sync_{suffix}",
        "FACTLEDGER_SYNC__POLL_INTERVAL_S": "0.2",
        "FACTLEDGER_SYNC__LEASE_S": "2",
        "FACTLEDGER_BACKEND__KIND": "pgvector",
        "FACTLEDGER_BACKEND__SCHEMA_NAME": f"memory_{suffix}",
        "FACTLEDGER_EMBEDDER__KIND": "hashing",
        # The tests check that recall answers again, not how fast: a loaded machine must not
        # turn it into a degraded answer before it starts.
        "FACTLEDGER_RECALL__RECALL_BUDGET_S": "10",
        "FACTLEDGER_POSTGRES__CONNECT_TIMEOUT_S": "2",
        "FACTLEDGER_POSTGRES__ACQUIRE_TIMEOUT_S": "2",
        "FACTLEDGER_POSTGRES__RECONNECT_TIMEOUT_S": "2",
        "FACTLEDGER_POSTGRES__STATEMENT_TIMEOUT_S": "5",
    }
    if read_url is not None:
        extra["FACTLEDGER_DATABASE_READ_URL"] = read_url
    return serve_env(data_dir, extra)


@contextmanager
def worker_process(env: Mapping[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A `factledger worker` process (the sync from the ledger to pgvector), yielded once it
    follows the ledger (its `sync.worker_started` line); stopped on exit."""
    entry = "from factledger.api.cli.main import main; main()"
    with log.open("wb") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            [sys.executable, "-c", entry, "worker"],
            env={**env, "PYTHONUNBUFFERED": "1"},  # its lines reach the file as they come
            stdout=sink,  # its log lines
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + WORKER_START_LIMIT_S
        while "sync.worker_started" not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start: {log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=WORKER_STOP_LIMIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=WORKER_STOP_LIMIT_S)
