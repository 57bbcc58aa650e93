"""Opens the webhook dispatcher: the ledger's log, the delivery log and an HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from factledger.adapters.sqlite.delivery_log import SqliteDeliveryLog
from factledger.adapters.webhook_http import HttpxWebhookSender
from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.settings import Settings, WebhookEndpointSettings
from factledger.application.clocks import SystemClock
from factledger.application.ledger.event_log import TenantEventLog
from factledger.application.webhooks.dispatch import Endpoint, WebhookDispatcher

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


def open_delivery_log(settings: Settings) -> SqliteDeliveryLog:
    path = settings.webhooks.log_path or settings.data_dir / DELIVERY_LOG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteDeliveryLog(path)


@asynccontextmanager
async def open_webhooks(settings: Settings) -> AsyncIterator[WebhookDispatcher]:
    """The dispatcher over the configured endpoints (the ledger only: no views to catch up)."""
    log = open_delivery_log(settings)
    try:
        with open_ledger_runtime(settings, catch_up=False) as runtime:
            async with httpx.AsyncClient() as http:
                yield WebhookDispatcher(
                    [endpoint_of(e) for e in settings.webhooks.endpoints],
                    events=TenantEventLog(runtime.ledger),
                    log=log,
                    sender=HttpxWebhookSender(http),
                    clock=SystemClock(),
                    batch=settings.webhooks.batch,
                )
    finally:
        log.close()
