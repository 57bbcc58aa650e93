"""The ledger on every event store: POPO and SQLite always, embedded PostgreSQL (integration)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.application.ledger import Ledger
from factledger.testing.ledger_stores import open_ledger, store_env
from factledger.testing.manual_clock import ManualClock

STORE_PARAMS = [
    pytest.param("popo", id="popo"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]


@pytest.fixture(params=STORE_PARAMS)
def ledger_env(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    store: str = request.param
    postgres = request.getfixturevalue("postgres") if store == "postgres" else None
    return store_env(store, workdir=tmp_path, postgres=postgres)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ledger(ledger_env: dict[str, str], clock: ManualClock) -> Iterator[Ledger]:
    with open_ledger(ledger_env, clock=clock) as ledger:
        yield ledger
