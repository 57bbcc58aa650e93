"""A `factledger worker` pass that kills its own process (SIGKILL) on the n-th backend write.

For the crash test of the sync: the kill happens mid-batch, with no cleanup, exactly as an
OOM kill or a lost node would. Run as `python tests/support/sync_crash_worker.py N`
with the same `FACTLEDGER_*` settings as the worker.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import replace

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import WORKER
from factledger.api.bootstrap.services import sync_options
from factledger.api.settings import load_settings
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Metadata, Namespace
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.testing.stalling_backend import Fault, StallingBackend


class KillOnWrite(StallingBackend):
    """Kills the process right after the n-th record write reached the backend."""

    def __init__(self, inner: MemoryBackend, *, kill_on: int) -> None:
        super().__init__(inner, fault=Fault.NONE)
        self.kill_on, self.writes = kill_on, 0

    async def put_record(
        self,
        namespace: Namespace,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: Metadata | None = None,
        *,
        search_text: str | None = None,
    ) -> None:
        await self.inner.put_record(
            namespace, record_id, kind, body_json, metadata, search_text=search_text
        )
        self.writes += 1
        if self.writes == self.kill_on:
            os.kill(os.getpid(), signal.SIGKILL)


async def main(kill_on: int) -> None:
    settings = load_settings()
    async with open_runtime(settings, replace(WORKER, catch_up=False)) as runtime:
        store, backend = runtime.sync_store, runtime.backend
        if store is None or backend is None:
            raise SystemExit("the worker runtime has no sync store or backend")
        feed = LedgerEventFeed(runtime.ledger)
        ports = SyncPorts(store, feed, feed, KillOnWrite(backend, kill_on=kill_on))
        await SyncWorker(ports, sync_options(settings)).run_once()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
