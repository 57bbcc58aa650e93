"""Contract of the `DeliveryLog` port (`application.webhooks.ports`), over the in-memory and
SQLite adapters: positions per endpoint that never move back, every attempt kept, newest
first; SQLite's survive reopening the file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from factledger.adapters.in_memory.delivery_log import InMemoryDeliveryLog
from factledger.adapters.sqlite.delivery_log import SqliteDeliveryLog
from factledger.application.webhooks.ports import Delivery, DeliveryLog, Outcome

AT = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def attempt(endpoint: str, position: int, n: int, outcome: Outcome) -> Delivery:
    status = 200 if outcome is Outcome.DELIVERED else 503
    error = None if outcome is Outcome.DELIVERED else "http_503"
    return Delivery(endpoint, position, n, outcome, status, error, AT)


@pytest.fixture(params=[pytest.param("in_memory", id="in-memory"), "sqlite"])
async def log(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[DeliveryLog]:
    if request.param == "in_memory":
        yield InMemoryDeliveryLog()
        return
    sqlite = SqliteDeliveryLog(tmp_path / "webhooks.sqlite")
    yield sqlite
    sqlite.close()


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


async def test_sqlite_keeps_positions_and_attempts_across_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "webhooks.sqlite"
    first = SqliteDeliveryLog(path)
    await first.record(attempt("crm", 3, 1, Outcome.DELIVERED), advance_to=3)
    first.close()
    again = SqliteDeliveryLog(path)
    assert await again.position("crm") == 3
    assert len(await again.deliveries("crm", limit=5)) == 1
    again.close()
