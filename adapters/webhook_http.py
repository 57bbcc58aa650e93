"""`WebhookSender` over httpx: one POST, no redirects followed (a signed body goes only where
it was configured to go)."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from factledger.application.webhooks.ports import WebhookUnreachableError


class HttpxWebhookSender:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self._http = http

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, timeout_s: float
    ) -> int:
        try:
            response = await self._http.post(
                url, content=body, headers=dict(headers), timeout=timeout_s, follow_redirects=False
            )
        except httpx.HTTPError as exc:
            raise WebhookUnreachableError("webhook endpoint unreachable") from exc
        return response.status_code
