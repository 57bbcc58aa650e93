"""Contract of the `ImportPositions` port (`application.importing.positions`), run over every
adapter: in-memory, SQLite and PostgreSQL (integration; each test in its own schema). Each
test may open a second handle on the same store, as a second process would."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.stores import close, new_schema

from factledger.adapters.in_memory.import_positions import InMemoryImportPositions
from factledger.adapters.postgres.import_positions import PostgresImportPositions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.import_positions import SqliteImportPositions
from factledger.application.importing.positions import ImportPosition, ImportPositions
from factledger.application.importing.report import ImportReport, LineError

DURABLE = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
ADAPTERS = [pytest.param("in_memory", id="in-memory"), *DURABLE]


@dataclass
class Stores:
    """Handles on one store; `another()` opens one more on the same storage."""

    open_handle: Callable[[], Awaitable[ImportPositions]]
    opened: list[ImportPositions] = field(default_factory=list)

    async def another(self) -> ImportPositions:
        self.opened.append(await self.open_handle())
        return self.opened[-1]


@pytest.fixture(params=ADAPTERS)
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    kind: str = request.param
    shared = InMemoryImportPositions()

    async def open_handle() -> ImportPositions:
        if kind == "in_memory":
            return shared
        if kind == "sqlite":
            return SqliteImportPositions(tmp_path / "imports.sqlite")
        return await PostgresImportPositions.connect(location.conninfo, schema=schema)

    if kind == "postgres":
        location: PostgresLocation = request.getfixturevalue("postgres")
        schema = new_schema(location, "imports")
    made = Stores(open_handle)
    yield made
    for handle in made.opened:
        await close(handle)


@pytest.fixture
async def store(stores: Stores) -> ImportPositions:
    return await stores.another()


def at(line: int, *, finished: bool = False, sessions: int = 0) -> ImportPosition:
    report = ImportReport(import_id="file-1", lines=line, sessions=sessions)
    report.add_error(LineError(3, "messages[0].at", "is in the future", "ConversationTimeError"))
    return ImportPosition(line, f"digest-{line}", report.to_json(), finished)


async def test_an_import_never_saved_has_no_position(store: ImportPositions) -> None:
    assert await store.get("acme", "file-1") is None


async def test_a_saved_position_reads_back_whole(store: ImportPositions) -> None:
    assert await store.save("acme", "file-1", at(40, sessions=12))
    saved = await store.get("acme", "file-1")
    assert saved == at(40, sessions=12)
    assert saved is not None
    assert ImportReport.from_json(saved.report).errors[0].field == "messages[0].at"


async def test_a_position_only_moves_forward(store: ImportPositions) -> None:
    assert await store.save("acme", "file-1", at(40))
    assert not await store.save("acme", "file-1", at(39))  # a slower twin
    assert await store.save("acme", "file-1", at(40, finished=True))  # the finished mark
    assert await store.get("acme", "file-1") == at(40, finished=True)
    assert await store.save("acme", "file-1", at(90))


async def test_tenants_and_imports_never_share_positions(store: ImportPositions) -> None:
    await store.save("acme", "file-1", at(40))
    assert await store.get("globex", "file-1") is None
    assert await store.get("acme", "file-2") is None
    await store.save("globex", "file-1", at(5))
    assert (await store.get("acme", "file-1")) == at(40)


async def test_two_handles_share_positions(stores: Stores) -> None:
    a, b = await stores.another(), await stores.another()
    await a.save("acme", "file-1", at(40))
    assert await b.get("acme", "file-1") == at(40)
    assert not await b.save("acme", "file-1", at(10))


@pytest.mark.parametrize("stores", DURABLE, indirect=True)
async def test_positions_survive_closing_the_store(stores: Stores) -> None:
    first = await stores.another()
    await first.save("acme", "file-1", at(40, finished=True))
    await close(first)
    stores.opened.remove(first)
    reopened = await stores.another()
    assert await reopened.get("acme", "file-1") == at(40, finished=True)
