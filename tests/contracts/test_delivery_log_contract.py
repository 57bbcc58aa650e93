"""Contract of the `DeliveryLog` port (`application.webhooks.ports`), over the in-memory,
SQLite and PostgreSQL (integration; each test in its own schema) adapters: positions per
endpoint that never move back, every attempt kept, newest first; the durable ones survive a
reopen, as a restarted dispatcher finds them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.stores import close, new_schema

from factledger.adapters.in_memory.delivery_log import InMemoryDeliveryLog
from factledger.adapters.postgres.delivery_log import PostgresDeliveryLog
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.delivery_log import SqliteDeliveryLog
from factledger.application.webhooks.ports import Delivery, DeliveryLog, Outcome

AT = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def attempt(endpoint: str, position: int, n: int, outcome: Outcome) -> Delivery:
    status = 200 if outcome is Outcome.DELIVERED else 503
    error = None if outcome is Outcome.DELIVERED else "http_503"
    return Delivery(endpoint, position, n, outcome, status, error, AT)


DURABLE = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
Opener = Callable[[], Awaitable[DeliveryLog]]


def opener(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens a handle on one durable store; each call opens another on the same storage."""
    if kind == "sqlite":

        async def sqlite() -> DeliveryLog:
            return SqliteDeliveryLog(tmp_path / "webhooks.sqlite")

        return sqlite
    location: PostgresLocation = request.getfixturevalue("postgres")
    schema = new_schema(location, "webhooks")

    async def postgres() -> DeliveryLog:
        return await PostgresDeliveryLog.connect(location.conninfo, schema=schema)

    return postgres


@pytest.fixture(params=DURABLE)
def reopen(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    return opener(request.param, request, tmp_path)


@pytest.fixture(params=[pytest.param("in_memory", id="in-memory"), *DURABLE])
async def log(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[DeliveryLog]:
    if request.param == "in_memory":
        yield InMemoryDeliveryLog()
        return
    opened = await opener(request.param, request, tmp_path)()
    yield opened
    await close(opened)


async def test_a_new_endpoint_starts_at_zero(log: DeliveryLog) -> None:
    assert await log.position("crm") == 0
    assert await log.deliveries("crm", limit=10) == []


async def test_attempts_are_kept_newest_first_and_only_advances_move_the_position(
    log: DeliveryLog,
) -> None:
    await log.record(attempt("crm", 4, 1, Outcome.FAILED), advance_to=None)
    assert await log.position("crm") == 0
    await log.record(attempt("crm", 4, 2, Outcome.DELIVERED), advance_to=4)
    await log.record(attempt("audit", 9, 1, Outcome.GAVE_UP), advance_to=9)
    assert (await log.position("crm"), await log.position("audit")) == (4, 9)
    kept = await log.deliveries("crm", limit=10)
    assert [(d.attempt, d.outcome) for d in kept] == [(2, Outcome.DELIVERED), (1, Outcome.FAILED)]
    assert kept[0] == attempt("crm", 4, 2, Outcome.DELIVERED)
    assert len(await log.deliveries("crm", limit=1)) == 1


async def test_a_position_never_moves_back(log: DeliveryLog) -> None:
    await log.record(attempt("crm", 7, 1, Outcome.DELIVERED), advance_to=7)
    await log.record(attempt("crm", 5, 1, Outcome.DELIVERED), advance_to=5)
    assert await log.position("crm") == 7


async def test_positions_and_attempts_survive_a_reopen(reopen: Opener) -> None:
    first = await reopen()
    await first.record(attempt("crm", 3, 1, Outcome.DELIVERED), advance_to=3)
    await close(first)
    again = await reopen()
    assert await again.position("crm") == 3
    assert await again.deliveries("crm", limit=5) == [attempt("crm", 3, 1, Outcome.DELIVERED)]
    await close(again)


async def test_two_handles_share_one_position_per_endpoint(reopen: Opener) -> None:
    # Two dispatchers (a restart that overlaps the old process) write to the same store.
    one, two = await reopen(), await reopen()
    await one.record(attempt("crm", 8, 1, Outcome.DELIVERED), advance_to=8)
    await two.record(attempt("crm", 6, 1, Outcome.DELIVERED), advance_to=6)
    assert (await one.position("crm"), await two.position("crm")) == (8, 8)
    assert len(await two.deliveries("crm", limit=10)) == 2
    await close(one)
    await close(two)
