"""PostgreSQL's run of the unit tests parametrised over stores (ledgers in
tests/unit/application/ledger, projections in tests/unit/projections): the same test
functions, imported here, get these fixtures in place of the unit ones."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.store_kinds import (
    Projected,
    projected_story,
    twin_view_stores,
    view_store_factory,
)
from support.store_kinds import ledger_store as make_ledger_store

from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ViewStore
from factledger.testing.ledger_stores import LedgerStore, open_ledger
from factledger.testing.manual_clock import ManualClock


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def ledger_store(postgres: PostgresLocation, tmp_path: Path) -> Iterator[LedgerStore]:
    with make_ledger_store("postgres", tmp_path, postgres) as store:
        yield store


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ledger(ledger_store: LedgerStore, clock: ManualClock) -> Iterator[Ledger]:
    with open_ledger(ledger_store, clock=clock) as ledger:
        yield ledger


@pytest.fixture
def store_factory(postgres: PostgresLocation, tmp_path: Path) -> Iterator[object]:
    with view_store_factory("postgres", tmp_path, postgres) as factory:
        yield factory


@pytest.fixture
def projected(store_factory: Callable[[], ViewStore]) -> Iterator[Projected]:
    with projected_story(store_factory()) as projected:
        yield projected


@pytest.fixture
def twin_stores(postgres: PostgresLocation, tmp_path: Path) -> Iterator[list[ViewStore]]:
    with twin_view_stores("postgres", tmp_path, postgres) as stores:
        yield stores
