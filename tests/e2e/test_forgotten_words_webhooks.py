"""Forgotten words reach no webhook delivered after the forget (issue 30): not a fresh endpoint
replaying the log from the start, not one resuming from a mid-point, not the retry of a
delivery that failed before the forget. For a field forget, a memory forget and an erasure, on
SQLite and on PostgreSQL + pgvector. (What was delivered before the forget is the receiver's:
the first endpoint shows the words were there to leak.)"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from support.forgotten_words import (
    ADMIN,
    BACKENDS,
    ERASE_REASON,
    KEPT,
    SERVICE,
    backend_settings,
    client,
    memory_drawn_from,
    ok,
    said_for,
    serving,
    talk,
)

from factledger.adapters.sqlite.delivery_log import SqliteDeliveryLog
from factledger.api.settings import Settings
from factledger.application.ledger.event_log import TenantEventLog
from factledger.application.webhooks.dispatch import EVENT_HEADER, Endpoint, WebhookDispatcher
from factledger.application.webhooks.ports import Delivery, Outcome
from factledger.testing.manual_clock import ManualClock

SECRET = b"a-shared-secret-of-at-least-32-bytes!"
TENANT = "t1"


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    return backend_settings(request, tmp_path)


@dataclass
class Receivers:
    """Every endpoint's received bodies; `stuck` answers 500 to session events while `failing`."""

    failing: bool = True
    received: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, timeout_s: float
    ) -> int:
        if url.endswith("/stuck") and self.failing and headers[EVENT_HEADER] == "session_recorded":
            return 500
        self.received.setdefault(url.rsplit("/", 1)[1], []).append(json.loads(body))
        return 204

    def text(self, endpoint: str, since: int = 0) -> str:
        """What `endpoint` received, from its `since`-th delivery on."""
        return json.dumps(self.received.get(endpoint, [])[since:])


def endpoint(name: str) -> Endpoint:
    url = f"https://hooks.invalid/{name}"
    return Endpoint(name, TENANT, url, SECRET, content=True, max_attempts=5, backoff_s=60.0)


async def deliver_all(dispatcher: WebhookDispatcher) -> None:
    for _ in range(200):
        if await dispatcher.run_once() == 0:
            return
    raise AssertionError("the dispatcher never caught up")


@pytest.mark.parametrize("how", ["field", "memory", "erasure"])
async def test_no_delivery_after_a_forget_carries_the_forgotten_words(
    settings: Settings, tmp_path: Path, how: str
) -> None:
    said, ref, canaries = said_for(how, "crm-")
    receivers = Receivers()
    log = SqliteDeliveryLog(tmp_path / "hooks.sqlite")  # positions and attempts: no content
    clock = ManualClock(datetime(2026, 3, 3, 11, tzinfo=UTC))
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await talk(http, ref, f"wa-hook-{how}", said)
        events = TenantEventLog(rt.ledger)

        def dispatcher(*names: str) -> WebhookDispatcher:
            hooks = [endpoint(n) for n in names]
            return WebhookDispatcher(hooks, events=events, log=log, sender=receivers, clock=clock)

        before = dispatcher("early", "stuck")
        await deliver_all(before)  # stuck waits a minute to try its failed delivery again
        assert all(c in receivers.text("early") for c in canaries)  # there to leak before
        assert "session_recorded" not in receivers.text("stuck")  # its delivery failed

        stuck_before = len(receivers.received["stuck"])
        url = f"/v1/subjects/{sid}/forget"
        if how == "field":
            forget = {"field": "budget", "reason": "the subject asked"}
            await ok(await http.post(url, json=forget, headers=SERVICE))
        elif how == "memory":
            memory = await memory_drawn_from(rt, sid, "Island")
            forget = {"memory_id": memory, "reason": "the subject asked"}
            await ok(await http.post(url, json=forget, headers=SERVICE))
        else:
            body = {"reason": ERASE_REASON}
            await ok(await http.request("DELETE", f"/v1/subjects/{sid}", json=body, headers=ADMIN))
            canaries.append(ERASE_REASON)

        positions = [e.position for e in events.read(TENANT, after=0, limit=10_000).events]
        middle = positions[len(positions) // 2 - 1]
        at = clock.now()
        await log.record(
            Delivery("middle", middle, 1, Outcome.DELIVERED, 204, None, at), advance_to=middle
        )
        receivers.failing = False
        clock.advance(timedelta(minutes=2))
        await deliver_all(before)
        await deliver_all(dispatcher("replay", "middle"))
    log.close()

    after = {"stuck": stuck_before, "replay": 0, "middle": 0}
    assert "session_recorded" in receivers.text("stuck", stuck_before)  # retried after the forget
    assert "session_recorded" in receivers.text("replay")
    assert receivers.received["middle"]
    for name in ("stuck", "replay", "middle"):
        text = receivers.text(name, after[name])
        for canary in canaries:
            assert canary not in text, (name, canary)
        if how != "erasure":
            assert KEPT in receivers.text("replay")  # the subject's other words stay
