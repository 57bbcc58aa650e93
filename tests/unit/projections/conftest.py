"""The story projected into each kind of view store that needs no server (PostgreSQL's run
is in tests/integration/on_postgres)."""

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

from factledger.application.ledger.ports import ViewStore

VIEW_STORES = [pytest.param("memory", id="memory"), pytest.param("sqlite", id="sqlite")]


@pytest.fixture(params=VIEW_STORES)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    with view_store_factory(request.param, tmp_path) as factory:
        yield factory


@pytest.fixture
def projected(store_factory: Callable[[], ViewStore]) -> Iterator[Projected]:
    with projected_story(store_factory()) as projected:
        yield projected


@pytest.fixture(params=VIEW_STORES)
def twin_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[ViewStore]]:
    with twin_view_stores(request.param, tmp_path) as stores:
        yield stores
