"""The story projected into each kind of view store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

import pytest

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.view_store import ViewStore
from factledger.projections.follower import Follower
from factledger.projections.profile_projection import ProfileProjection
from factledger.projections.profile_reader import ViewStoreProfileReader
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN
from factledger.testing.story.steps import StoryIds


def make_store(kind: str, tmp_path: Path, postgres: PostgresLocation | None) -> ViewStore:
    name = f"profile_{uuid4().hex[:8]}"
    if kind == "memory":
        return InMemoryViewStore(name)
    if kind == "sqlite":
        return SqliteViewStore(tmp_path / "views.sqlite", name)
    assert postgres is not None
    return PostgresViewStore(postgres.conninfo, name, schema=f"views_{uuid4().hex[:8]}")


@pytest.fixture(
    params=[
        pytest.param("memory", id="memory"),
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
    ]
)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    kind: str = request.param
    postgres = request.getfixturevalue("postgres") if kind == "postgres" else None
    made: list[ViewStore] = []

    def factory() -> ViewStore:
        made.append(make_store(kind, tmp_path, postgres))
        return made[-1]

    yield factory
    for store in made:
        store.close()


@dataclass
class Projected:
    ledger: Ledger
    ids: StoryIds
    projection: ProfileProjection
    reader: ViewStoreProfileReader
    follower: Follower


@pytest.fixture
def projected(store_factory: object) -> Iterator[Projected]:
    """The story on a POPO ledger, projected live: the follower catches up after every step."""
    store = store_factory()  # type: ignore[operator]
    projection = ProfileProjection(store)
    clock = ManualClock(JAN)
    with Ledger({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock) as ledger:
        follower = Follower(ledger, [projection], page=3)
        ids = run_story(ledger, clock, lambda _: follower.catch_up())
        yield Projected(ledger, ids, projection, ViewStoreProfileReader(store), follower)
