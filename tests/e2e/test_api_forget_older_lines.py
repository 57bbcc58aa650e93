"""Over HTTP, on a ledger whose session was stored before per-line keys (its transcript one
ciphertext under the subject's key): forgetting the field it stated rotates the subject's key,
so the line is forgotten like any other (listed in `forgotten_lines`, none left in
`lines_not_erased`) and the session's other lines stay; erasing the subject takes them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import bearer, build_ports, token
from support.older_sealing import older_log

from factledger.adapters.in_memory.event_store import popo_env
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.ledger.commands import (
    ApproveChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import SessionRecorded
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as Speaker
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))
ADMIN = bearer(token(Role.ADMIN))
SAID = "We switched because of delivery delays."
WHEN = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(datetime(2026, 1, 6, 9, 0, tzinfo=UTC)))


def _older_subject(ports: Runtime) -> str:
    """A lead written by an older ledger over the same keys, copied into the served one."""
    tenant = token_tenant()
    scratch = Ledger(popo_env(), clock=ports.ledger.clock, keys=ports.ledger.keys)
    try:
        sid = scratch.register_subject(RegisterSubject(tenant, "lead", "lead-90")).subject_id
        transcript = (Message(Speaker.AGENT, "Why did you switch?"), Message(Speaker.SUBJECT, SAID))
        scratch.record_session(
            RecordSession(tenant, sid, "chat-1", Channel.CHAT, WHEN, WHEN, transcript)
        )
        change = ProposeChange(
            tenant,
            sid,
            "switch_reason",
            Operation.SET,
            TextValue("delivery delays"),
            Origin.STATED,
            Actor(ActorKind.MODEL, "m"),
            0,
            evidence=Evidence("chat-1", 1, "delivery delays"),
        )
        scratch.propose_change(change)
        scratch.approve_change(ApproveChange(tenant, sid, change.change_id, "rev"))
        ports.ledger.recorder.insert_events(older_log(scratch))
    finally:
        scratch.close()
    ports.catch_up()
    return str(sid)


def token_tenant() -> str:
    return "t1"  # the tenant of the harness's tokens


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def test_a_forget_erases_an_old_sessions_line_by_rotating_the_subject_key(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    sid = _older_subject(ports)
    recorded = next(e for e in ports.ledger.events.get(UUID(sid)) if isinstance(e, SessionRecorded))
    assert recorded.transcript[1]["text"] == SAID  # readable before
    body = {"field": "switch_reason", "reason": "asked by the lead"}
    answer = await ok(await http.post(f"/v1/subjects/{sid}/forget", json=body, headers=SERVICE))
    assert answer["applied"] is True
    assert answer["lines_not_erased"] == []
    assert {"session_id": "chat-1", "message_index": 1} in answer["forgotten_lines"]
    ports.ledger.mapper.forget_cached()  # type: ignore[attr-defined]
    recorded = next(e for e in ports.ledger.events.get(UUID(sid)) if isinstance(e, SessionRecorded))
    assert recorded.transcript[1] == {**recorded.transcript[1], "text": None, "forgotten": True}
    assert recorded.transcript[0]["text"] == "Why did you switch?"  # the other line stays

    erase = {"reason": "erasure requested"}
    await ok(await http.request("DELETE", f"/v1/subjects/{sid}", json=erase, headers=ADMIN))
    ports.ledger.mapper.forget_cached()  # type: ignore[attr-defined]
    recorded = next(e for e in ports.ledger.events.get(UUID(sid)) if isinstance(e, SessionRecorded))
    assert [m["text"] for m in recorded.transcript] == [None, None]


async def test_a_forget_on_lines_with_their_own_keys_names_none_not_erased(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    tenant = token_tenant()
    ledger = ports.ledger
    sid = ledger.register_subject(RegisterSubject(tenant, "lead", "lead-91")).subject_id
    transcript = (Message(Speaker.AGENT, "Why did you switch?"), Message(Speaker.SUBJECT, SAID))
    ledger.record_session(
        RecordSession(tenant, sid, "chat-1", Channel.CHAT, WHEN, WHEN, transcript)
    )
    change = ProposeChange(
        tenant,
        sid,
        "switch_reason",
        Operation.SET,
        TextValue("delivery delays"),
        Origin.STATED,
        Actor(ActorKind.MODEL, "m"),
        0,
        evidence=Evidence("chat-1", 1, "delivery delays"),
    )
    ledger.propose_change(change)
    ports.catch_up()
    body = {"field": "switch_reason", "reason": "asked by the lead"}
    answer = await ok(await http.post(f"/v1/subjects/{sid}/forget", json=body, headers=SERVICE))
    assert answer["lines_not_erased"] == []
    assert {"session_id": "chat-1", "message_index": 1} in answer["forgotten_lines"]
