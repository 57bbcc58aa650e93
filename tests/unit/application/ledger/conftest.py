"""The ledger on every event store that needs no server: POPO and SQLite (PostgreSQL's run is
in tests/integration/on_postgres)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.store_kinds import ledger_store as make_ledger_store

from factledger.application.ledger.ledger import Ledger
from factledger.testing.ledger_stores import LedgerStore, open_ledger
from factledger.testing.manual_clock import ManualClock

STORE_PARAMS = [pytest.param("popo", id="popo"), pytest.param("sqlite", id="sqlite")]


@pytest.fixture(params=STORE_PARAMS)
def ledger_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerStore]:
    with make_ledger_store(request.param, tmp_path) as store:
        yield store


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ledger(ledger_store: LedgerStore, clock: ManualClock) -> Iterator[Ledger]:
    with open_ledger(ledger_store, clock=clock) as ledger:
        yield ledger
