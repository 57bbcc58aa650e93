"""The ledger on every event store: POPO and SQLite always, embedded PostgreSQL (integration)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.application.ledger.ledger import Ledger
from factledger.testing.ledger_stores import LedgerStore, make_store, open_ledger
from factledger.testing.manual_clock import ManualClock

STORE_PARAMS = [
    pytest.param("popo", id="popo"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]


@pytest.fixture(params=STORE_PARAMS)
def ledger_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LedgerStore]:
    kind: str = request.param
    postgres = request.getfixturevalue("postgres") if kind == "postgres" else None
    store = make_store(kind, workdir=tmp_path, postgres=postgres)
    with store.resources:
        yield store


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ledger(ledger_store: LedgerStore, clock: ManualClock) -> Iterator[Ledger]:
    with open_ledger(ledger_store, clock=clock) as ledger:
        yield ledger
