"""The httpx webhook sender: one POST of the exact body and headers, the status as answered,
no redirect followed, a connection failure as `WebhookUnreachableError`, and no POST at all to
an internal address unless the operator allowed them."""

from __future__ import annotations

import httpx
import pytest

from factledger.adapters.webhook_http import HttpxWebhookSender
from factledger.application.webhooks.ports import (
    WebhookAddressRefusedError,
    WebhookUnreachableError,
)


async def test_it_posts_the_exact_body_and_answers_the_status() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(307, headers={"Location": "https://elsewhere.invalid/"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        status = await HttpxWebhookSender(http).post(
            "https://crm.invalid/hook", b'{"id":"crm:1"}', {"X-Test": "1"}, timeout_s=5
        )
    assert status == 307  # not followed: a failure, retried, never sent elsewhere
    (request,) = seen
    assert (request.method, request.content, request.headers["X-Test"]) == (
        "POST",
        b'{"id":"crm:1"}',
        "1",
    )


async def test_a_connection_failure_is_unreachable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        with pytest.raises(WebhookUnreachableError) as raised:
            await HttpxWebhookSender(http).post("https://crm.invalid/", b"{}", {}, timeout_s=5)
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://api.localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://[fe80::1]/hook",
        "http://192.168.0.10/hook",
        "http://100.64.0.1/hook",
        "http://0.0.0.0/hook",
        "http://[::ffff:10.0.0.1]/hook",
    ],
)
async def test_an_internal_address_is_refused_before_any_post(url: str) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        with pytest.raises(WebhookAddressRefusedError):
            await HttpxWebhookSender(http).post(url, b"{}", {}, timeout_s=5)
        assert (
            await HttpxWebhookSender(http, allow_internal=True).post(url, b"{}", {}, timeout_s=5)
            == 200
        )
    assert len(seen) == 1  # only the allowed one was sent
