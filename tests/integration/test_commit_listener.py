"""Wake on commit across processes (issue 19, ADR 0024): the ledger's PostgreSQL transaction
NOTIFYs, a `factledger worker` runtime LISTENs on a connection of its own, and keeps listening
after the database is killed and restarted (ADR 0013)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr
from support.crash import CrashablePostgres

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.postgres.commit_listener import CommitListener, start_listening
from factledger.adapters.postgres.event_store import commit_channel, postgres_env
from factledger.adapters.postgres_pool import PoolOptions
from factledger.api.bootstrap.compose import open_ledger_runtime, open_runtime
from factledger.api.bootstrap.runtime import WORKER
from factledger.api.settings import Settings
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story

pytestmark = [pytest.mark.integration, pytest.mark.serial]

# Generous bounds for a loaded shared machine; the worker's poll is far longer than both.
HEARD_WITHIN_S = 5.0
RELISTENS_WITHIN_S = 15.0
POOL = PoolOptions(connect_timeout_s=2, acquire_timeout_s=1.5, reconnect_timeout_s=2.0)


async def until(check: Callable[[], bool], within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"{what} not within {within_s} s"
        await asyncio.sleep(0.05)


async def register(ledger: Ledger, ref: str) -> None:
    """Registers a subject, retrying while the ledger's pool heals after a restart."""
    deadline = time.monotonic() + RELISTENS_WITHIN_S
    while True:
        try:
            await asyncio.to_thread(ledger.register_subject, RegisterSubject("acme", "lead", ref))
            return
        except Exception:
            assert time.monotonic() < deadline, "the ledger did not heal"
            await asyncio.sleep(0.2)


async def test_a_listener_hears_commits_and_listens_again_after_a_restart(
    crashable: CrashablePostgres,
) -> None:
    ledger = Ledger(
        postgres_env(crashable.location, schema="events", pool=POOL), keys=InMemoryKeyStore()
    )
    channel = commit_channel(ledger.recorder)
    assert channel is not None
    heard: list[float] = []
    listener = CommitListener(
        crashable.location.conninfo,
        channel,
        lambda: heard.append(time.monotonic()),
        connect_kwargs=POOL.connection_kwargs(autocommit=True),
        retry_s=0.2,
    )
    halt = start_listening(listener)
    try:
        await until(lambda: listener.connections == 1, HEARD_WITHIN_S, "listening")
        before = len(heard)  # one call on connecting, for commits nobody heard
        await register(ledger, "l-1")
        await until(lambda: len(heard) > before, HEARD_WITHIN_S, "the commit's notification")

        # When: the database is killed while the listener waits, then restarted
        await asyncio.to_thread(crashable.kill)
        await asyncio.sleep(0.5)
        await asyncio.to_thread(crashable.restart)

        # Then: it listens again on a new connection, and hears the next commit
        await until(lambda: listener.connections == 2, RELISTENS_WITHIN_S, "listening again")
        before = len(heard)
        await register(ledger, "l-2")
        await until(lambda: len(heard) > before, HEARD_WITHIN_S, "a commit after the restart")
    finally:
        await halt()
        ledger.close()


async def test_a_worker_runtime_is_woken_by_another_process_commit(
    crashable: CrashablePostgres, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(crashable.url()),
        event_store={"kind": "postgres", "schema_name": "events"},  # type: ignore[arg-type]
        views={"kind": "memory"},  # type: ignore[arg-type]
        sync={"store": {"kind": "postgres", "schema_name": "sync"}, "poll_interval_s": 60},  # type: ignore[arg-type]
        backend={"kind": "pgvector"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
    )
    async with open_runtime(settings, WORKER) as worker_rt:
        worker, store = worker_rt.sync_worker, worker_rt.sync_store
        assert worker is not None
        assert store is not None
        stop = asyncio.Event()
        task = asyncio.create_task(worker.run_forever(stop))
        try:
            await asyncio.sleep(1.0)  # the first pass is done; the worker idles on its poll
            # Another process's ledger: its own pools, and no after-commit hook of the worker's
            clock = ManualClock()
            with open_ledger_runtime(settings, clock=clock) as api_rt:
                await asyncio.to_thread(run_story, api_rt.ledger, clock, until="January")
            deadline = time.monotonic() + HEARD_WITHIN_S
            while await store.position() == 0:
                assert time.monotonic() < deadline, "the worker slept through the commit"
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await task
