"""Opens the webhook dispatcher: the ledger's log, the delivery log and an HTTP client.

The delivery log sits beside the configured event store: a table in the PostgreSQL event
store's schema (every host that runs the dispatcher sees one position per endpoint), else a
SQLite file (`webhooks.log_path`, default `<data_dir>/webhooks.sqlite`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx

from factledger.adapters.sqlite.delivery_log import SqliteDeliveryLog
from factledger.adapters.webhook_http import HttpxWebhookSender
from factledger.api.bootstrap.ledger import open_ledger
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import PostgresEventStoreSettings, Settings, WebhookEndpointSettings
from factledger.application.clocks import SystemClock
from factledger.application.ledger.event_log import TenantEventLog
from factledger.application.webhooks.dispatch import Endpoint, WebhookDispatcher
from factledger.application.webhooks.ports import DeliveryLog

DELIVERY_LOG_FILE = "webhooks.sqlite"


def endpoint_of(s: WebhookEndpointSettings) -> Endpoint:
    return Endpoint(
        id=s.id,
        tenant=s.tenant,
        url=str(s.url),
        secret=s.secret.get_secret_value().encode(),
        kinds=s.kinds,
        types=s.types,
        content=s.content,
        max_attempts=s.max_attempts,
        backoff_s=s.backoff_s,
        max_backoff_s=s.max_backoff_s,
        timeout_s=s.timeout_s,
    )


async def open_delivery_log(
    settings: Settings, postgres: PostgresServer, stack: AsyncExitStack
) -> DeliveryLog:
    """Opens the delivery log beside the event store (closed by `stack`)."""
    match settings.event_store:
        case PostgresEventStoreSettings(schema_name=schema):
            # Imported in the arm: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres.delivery_log import PostgresDeliveryLog

            pg = await PostgresDeliveryLog.connect(
                postgres.location().conninfo, schema=schema, pool=postgres.pool()
            )
            stack.push_async_callback(pg.close)
            return pg
        case _:
            path = settings.webhooks.log_path or settings.data_dir / DELIVERY_LOG_FILE
            path.parent.mkdir(parents=True, exist_ok=True)
            sqlite = SqliteDeliveryLog(path)
            stack.callback(sqlite.close)
            return sqlite


@asynccontextmanager
async def opened_delivery_log(settings: Settings) -> AsyncIterator[DeliveryLog]:
    """The delivery log alone, for reading it (`factledger webhooks log`)."""
    async with AsyncExitStack() as stack:
        postgres = stack.enter_context(PostgresServer(settings))
        yield await open_delivery_log(settings, postgres, stack)


@asynccontextmanager
async def open_webhooks(settings: Settings) -> AsyncIterator[WebhookDispatcher]:
    """The dispatcher over the configured endpoints (the ledger only: no views to catch up)."""
    async with AsyncExitStack() as stack:
        postgres = stack.enter_context(PostgresServer(settings))
        runtime = stack.enter_context(open_ledger(settings, postgres, clock=None, catch_up=False))
        log = await open_delivery_log(settings, postgres, stack)
        http = await stack.enter_async_context(httpx.AsyncClient())
        yield WebhookDispatcher(
            [endpoint_of(e) for e in settings.webhooks.endpoints],
            events=TenantEventLog(runtime.ledger),
            log=log,
            sender=HttpxWebhookSender(
                http, allow_internal=settings.webhooks.allow_internal_addresses
            ),
            clock=SystemClock(),
            batch=settings.webhooks.batch,
        )
