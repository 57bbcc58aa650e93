"""Over HTTP, on the embedded default: credentials in any wording, IBANs and card numbers are
withheld by the safety filter; the message is counted, never kept, and no log carries it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import structlog
from support.api_harness import TEST_AUTH, asgi_client, bearer, build_ports, line, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
URL = "/v1/subjects/me/sessions/wa-1/messages"
SECRETS = [
    ("the admin pw is hunter2", "hunter2"),
    ("The password for the portal is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("passcode 4411", "4411"),
    ("3kJ9x2LmQp7RtY8vWz4aB6cD", "3kJ9x2LmQp7RtY8vWz4aB6cD"),
    ("our IBAN is DE89 3704 0044 0532 0130 00", "0532 0130"),
    ("card 4111 1111 1111 1111, expires soon", "4111 1111"),
    # No format and no English credential word: the learned secret head's (ADR 0185).
    ("Der Code für das Gartentor ist 7731, falls niemand aufmacht.", "7731"),
    ("Il PIN della carta è 8352.", "8352"),
    ("Код от домофона 2741, заходите.", "2741"),
]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    async with asgi_client(app) as client:
        register = {"kind": "lead", "external_ref": "crm-1"}
        assert (await client.post("/v1/subjects", json=register, headers=SERVICE)).is_success
        start = {"session_id": "wa-1", "channel": "chat"}
        assert (await client.post("/v1/subjects/me/sessions", json=start, headers=AGENT)).is_success
        yield client


async def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize(("text", "secret"), SECRETS)
async def test_a_secret_in_any_wording_is_withheld(
    http: httpx.AsyncClient, text: str, secret: str
) -> None:
    with structlog.testing.capture_logs() as logs:
        outcome = await ok(await http.post(**line(URL, {"role": "subject", "text": text}, AGENT)))
    assert outcome == {"kept": False, "index": None, "withheld_total": 1}
    assert secret not in (await http.get(URL, headers=AGENT)).text
    assert secret not in repr(logs)


@pytest.mark.parametrize(
    "text",
    [
        "The password policy is strict, and we use Supplier B.",
        "Mi pedido número 48213 todavía no ha llegado.",
        "Je voudrais réinitialiser mon code PIN, je l'ai oublié.",
    ],
)
async def test_ordinary_talk_is_kept(http: httpx.AsyncClient, text: str) -> None:
    said = {"role": "subject", "text": text}
    assert (await ok(await http.post(**line(URL, said, AGENT))))["kept"] is True
