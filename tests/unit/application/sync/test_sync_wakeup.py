"""A commit wakes the in-process sync worker: with a poll interval far longer than the test
may take, only the wakeup can get the work done in time."""

from __future__ import annotations

import asyncio
import threading

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.ledger.ledger import Ledger
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.wakeup import Wakeup
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story

NEVER_S = 3600.0  # a poll that never comes within the test
GUARD_S = 10.0  # only so that a broken wakeup fails instead of hanging


async def test_a_notification_from_another_thread_wakes_the_waiter() -> None:
    wakeup, stop = Wakeup(), asyncio.Event()
    waiting = asyncio.create_task(wakeup.wait(stop, within_s=NEVER_S))
    await asyncio.sleep(0)  # the waiter is registered
    threading.Thread(target=wakeup.notify).start()
    await asyncio.wait_for(waiting, timeout=GUARD_S)


async def test_a_notification_while_nobody_waits_is_kept_for_the_next_wait() -> None:
    wakeup = Wakeup()
    wakeup.notify()
    await asyncio.wait_for(wakeup.wait(asyncio.Event(), within_s=NEVER_S), timeout=GUARD_S)


async def test_stop_ends_the_wait() -> None:
    wakeup, stop = Wakeup(), asyncio.Event()
    waiting = asyncio.create_task(wakeup.wait(stop, within_s=NEVER_S))
    await asyncio.sleep(0)
    stop.set()
    await asyncio.wait_for(waiting, timeout=GUARD_S)


async def test_a_ledger_commit_wakes_an_idle_worker() -> None:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    backend = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    store, feed, wakeup = InMemorySyncStore(), LedgerEventFeed(ledger), Wakeup()
    ledger.after_commit.append(wakeup.notify)
    worker = SyncWorker(
        SyncPorts(store, feed, feed, backend),
        SyncOptions(poll_interval_s=NEVER_S),
        wakeup=wakeup,
    )
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run_forever(stop))
    try:
        await asyncio.sleep(0.05)  # the worker found nothing and went idle
        await asyncio.to_thread(run_story, ledger, clock, until="June")

        async def synced() -> bool:
            for _ in range(int(GUARD_S / 0.01)):
                if await store.position() > 0 and await store.pending_count() == 0:
                    return True
                await asyncio.sleep(0.01)
            return False

        assert await synced()
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=GUARD_S)
        ledger.close()
