"""A key held by an API process that dies is free again within one lease; while the process
lives, its renewals keep the key "in progress" well past the lease (SQLite, as the API
processes of one node share it)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import pytest

from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.application.ledger.idempotency import ClaimStatus, IdempotencyScope

pytestmark = pytest.mark.serial

LEASE_S = 1.0
SUBJECT = UUID("3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e")
SCOPE = IdempotencyScope("t1", "agent-1", SUBJECT, "key-00000001")

# A process that claims the key and runs a command that never ends, renewing its lease.
HOLDER = """
import asyncio, sys
from uuid import UUID
from fastapi import Response
from pydantic import BaseModel
from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.api.http.idempotency import Idempotency
from factledger.application.ledger.idempotency import IdempotencyScope

class Out(BaseModel):
    n: int

async def forever() -> Out:
    print("running", flush=True)
    await asyncio.Event().wait()
    return Out(n=1)

async def main() -> None:
    store = SqliteIdempotencyStore(sys.argv[1], lease_s=float(sys.argv[2]))
    subject = UUID("3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e")
    scope = IdempotencyScope("t1", "agent-1", subject, "key-00000001")
    await Idempotency(store, scope, "fp", Response()).run(forever, Out)

asyncio.run(main())
"""


async def test_a_dead_processs_key_frees_within_its_lease_and_a_live_one_keeps_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "idempotency.sqlite"
    store = SqliteIdempotencyStore(path, lease_s=LEASE_S)
    holder = subprocess.Popen(  # noqa: ASYNC220, S603 - this interpreter, a fixed script
        [sys.executable, "-c", HOLDER, str(path), str(LEASE_S)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "running"
        # Alive for three leases: its renewals keep the key.
        deadline = time.monotonic() + 3 * LEASE_S
        while time.monotonic() < deadline:
            assert (await store.claim(SCOPE, "fp")).status is ClaimStatus.IN_PROGRESS
            await asyncio.sleep(0.1)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        died = time.monotonic()
        # Dead: no renewal, no release; the key is free once the lease lapses.
        while (await store.claim(SCOPE, "fp")).status is ClaimStatus.IN_PROGRESS:
            assert time.monotonic() - died < LEASE_S + 2.0, "the key outlived its lease"
            await asyncio.sleep(0.05)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        store.close()
