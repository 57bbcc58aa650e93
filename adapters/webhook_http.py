"""`WebhookSender` over httpx: one POST, no redirects followed (a signed body goes only where
it was configured to go), and none to an internal address (loopback, link-local, private)
unless the operator allows them: the host is looked up before each POST, so a public name
that now points inward is refused too (`WebhookAddressRefusedError`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import httpx

from factledger.adapters.network_addresses import resolves_internal
from factledger.application.webhooks.ports import (
    WebhookAddressRefusedError,
    WebhookUnreachableError,
)


class HttpxWebhookSender:
    def __init__(self, http: httpx.AsyncClient, *, allow_internal: bool = False) -> None:
        self._http = http
        self._allow_internal = allow_internal

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, timeout_s: float
    ) -> int:
        if not self._allow_internal:
            target = httpx.URL(url)
            port = target.port or (443 if target.scheme == "https" else 80)
            if await asyncio.to_thread(resolves_internal, target.host, port):
                raise WebhookAddressRefusedError("webhook endpoint is an internal address")
        try:
            response = await self._http.post(
                url, content=body, headers=dict(headers), timeout=timeout_s, follow_redirects=False
            )
        except httpx.HTTPError as exc:
            raise WebhookUnreachableError("webhook endpoint unreachable") from exc
        return response.status_code
