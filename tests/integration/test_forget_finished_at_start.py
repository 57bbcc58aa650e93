"""A forget interrupted between its event and the key deletion, in a process that then
stopped: the next API process (`open_runtime`, as `serve` opens it) deletes the keys by
itself at start-up, with no retry and no command."""

from __future__ import annotations

import asyncio
from pathlib import Path

from unit.application.ledger.test_ledger_forget_finished import (
    STATED,
    FailingWhenArmed,
    _assert_forgotten,
    _everything_readable,
    _interrupted_approval,
)

from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs
from factledger.api.settings import load_settings
from factledger.application.ledger.ledger import Ledger
from factledger.testing.manual_clock import ManualClock

# The parts an API process opens that the pass needs: the ledger and the idempotency store.
API_LEDGER = Needs(backend=False, sessions=False, imports=False, run_sync=False)


async def test_the_next_api_process_finishes_it_at_start_up(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path, embedder={"kind": "hashing"})
    stored_keys = SqliteKeyStore(settings.keys_path())
    keys = FailingWhenArmed(stored_keys)
    try:
        with Ledger(sqlite_env(settings.ledger_path()), keys=keys, clock=ManualClock()) as ledger:
            sid, _ = _interrupted_approval(ledger, keys)
    finally:
        stored_keys.close()
    async with open_runtime(settings, API_LEDGER) as runtime:
        deadline = asyncio.get_running_loop().time() + 30
        while STATED in await asyncio.to_thread(_everything_readable, runtime.ledger, sid):
            assert asyncio.get_running_loop().time() < deadline, "not finished at start-up"
            await asyncio.sleep(0.05)
        _assert_forgotten(runtime.ledger, sid)
