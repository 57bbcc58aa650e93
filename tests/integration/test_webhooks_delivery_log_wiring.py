"""The composition root keeps the webhook delivery log beside the event store: a table in
the PostgreSQL event store's schema, else the SQLite file (ADR 0022's dispatcher)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.stores import new_schema

from factledger.adapters.postgres.delivery_log import PostgresDeliveryLog
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.delivery_log import SqliteDeliveryLog
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.bootstrap.webhooks import open_delivery_log, opened_delivery_log
from factledger.api.settings import Settings, load_settings
from factledger.application.webhooks.ports import Delivery, Outcome

AT = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def on_postgres(tmp_path: Path, location: PostgresLocation, schema: str) -> Settings:
    url = f"postgresql://{location.user}:@:{location.port}/{location.dbname}?host={location.host}"
    return load_settings(
        data_dir=tmp_path, database_url=url, event_store={"kind": "postgres", "schema_name": schema}
    )


@pytest.mark.integration
async def test_the_postgres_event_store_gets_a_postgres_delivery_log(
    tmp_path: Path, postgres: PostgresLocation
) -> None:
    settings = on_postgres(tmp_path, postgres, new_schema(postgres, "hooks"))
    async with AsyncExitStack() as stack:
        server = stack.enter_context(PostgresServer(settings))
        log = await open_delivery_log(settings, server, stack)
        assert isinstance(log, PostgresDeliveryLog)
        delivered = Delivery("crm", 5, 1, Outcome.DELIVERED, 200, None, AT)
        await log.record(delivered, advance_to=5)
    # `factledger webhooks log` reads the same table, from another opening.
    async with opened_delivery_log(settings) as again:
        assert await again.position("crm") == 5
    assert not (tmp_path / "webhooks.sqlite").exists()


async def test_a_sqlite_event_store_keeps_the_delivery_log_in_a_file(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path, event_store={"kind": "sqlite"})
    async with opened_delivery_log(settings) as log:
        assert isinstance(log, SqliteDeliveryLog)
        await log.record(Delivery("crm", 2, 1, Outcome.GAVE_UP, 500, "http_500", AT), advance_to=2)
    assert (tmp_path / "webhooks.sqlite").exists()
