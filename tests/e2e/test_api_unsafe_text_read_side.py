"""The read side never fails on what the ledger already holds: a subject whose events carry a
NUL or a lone surrogate, recorded before such text was refused (here: with the domain's text
checks switched off), reads back through every view with 200s, the bad characters replaced by
U+FFFD. A lone surrogate in a summary once made `context` and the events feed 500 for ever."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.ledger.commands import (
    ApproveChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
)
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.domain import proposal, provenance, sessions
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as Speaker
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

JAN = datetime(2026, 1, 14, 10, tzinfo=UTC)
LONE = "\udfff"
NUL = "\x00"
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
ANALYST = bearer(token(Role.ANALYST))
REVIEWER = bearer(token(Role.REVIEWER))
SERVICE = bearer(token(Role.SERVICE))


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(JAN))


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


def record_the_old_way(ports: Runtime, monkeypatch: pytest.MonkeyPatch) -> UUID:
    """A session, a confirmed and a pending proposal and a rejection, all carrying NUL or lone
    surrogates, written with the domain's text checks off, as before they existed."""
    with monkeypatch.context() as old_code:
        old_code.setattr(sessions, "check_session_text", lambda _: None)
        old_code.setattr(proposal, "check_text", lambda *_: None)
        old_code.setattr(provenance, "check_text", lambda *_: None)
        ledger = ports.ledger
        ledger.register_subject(RegisterSubject("t1", "lead", "crm-1"))
        subject_id = ledger.subject_id_for("t1", "lead", "crm-1")
        said = f"We use Supplier {LONE}A{NUL} now"
        ledger.record_session(
            RecordSession(
                tenant="t1",
                subject_id=subject_id,
                session_id="wa-1",
                channel=Channel.WHATSAPP,
                started_at=JAN,
                ended_at=JAN,
                transcript=(Message(Speaker.SUBJECT, said, JAN),),
                summary={"topic": f"suppliers {LONE}", f"key{NUL}": [f"item {LONE}"]},
            )
        )
        staff = Actor(ActorKind.STAFF, "staff-1")

        def propose(value: str, version: int) -> UUID:
            cmd = ProposeChange(
                tenant="t1",
                subject_id=subject_id,
                field="supplier",
                operation=Operation.SET,
                value=TextValue(value),
                origin=Origin.STATED,
                proposed_by=staff,
                based_on_version=version,
                evidence=Evidence("wa-1", 0, "We use Supplier"),
                condition=f"if {NUL} pricing works",
                rationale=f"said {LONE}",
            )
            ledger.propose_change(cmd)
            return cmd.change_id

        confirmed = propose(f"Supplier {LONE}A", 0)
        ledger.approve_change(
            ApproveChange("t1", subject_id, confirmed, "staff-1", note=f"ok {LONE}")
        )
        rejected = propose(f"Supplier {NUL}B", 1)
        ledger.reject_change(RejectChange("t1", subject_id, rejected, staff, f"no {NUL}"))
        propose(f"Supplier {LONE}C", 1)  # stays pending: the review queue shows it
    return subject_id


async def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def carries_no_bad_text(body: Any) -> None:
    text = json.dumps(body)  # ASCII JSON: the bad characters would show as escapes
    assert "\\u0000" not in text
    assert "\\udfff" not in text


async def test_every_view_of_a_subject_holding_bad_text_answers(
    http: httpx.AsyncClient, ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject_id = record_the_old_way(ports, monkeypatch)
    path = f"/v1/subjects/{subject_id}"

    reads = [
        await http.post(f"{path}/context", json={}, headers=SERVICE),
        await http.post("/v1/subjects/me/context", json={}, headers=AGENT),
        await http.post(f"{path}/recall", json={"query": "supplier"}, headers=SERVICE),
        await http.get(f"{path}/events", headers=ANALYST),
        await http.get(f"{path}/profile", headers=SERVICE),
        await http.get(f"{path}/profile/versions/1", headers=SERVICE),
        await http.get(f"{path}/profile/history", headers=ANALYST),
        await http.get(f"{path}/profile/diff?from_version=0&to_version=1", headers=ANALYST),
        await http.get("/v1/proposals/pending", headers=REVIEWER),
    ]

    for body in [await ok(r) for r in reads]:
        carries_no_bad_text(body)
    profile = await ok(await http.get(f"{path}/profile", headers=SERVICE))
    assert profile["fields"]["supplier"]["value"]["value"] == "Supplier \ufffdA"
    events = (await ok(await http.get(f"{path}/events", headers=ANALYST)))["events"]
    recorded = next(e for e in events if e["topic"].endswith("session_recorded.v1"))
    assert recorded["payload"]["summary"]["topic"] == "suppliers \ufffd"


async def test_an_active_session_holding_a_nul_is_read_and_ended(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    await http.post("/v1/subjects", json={"kind": "lead", "external_ref": "crm-1"}, headers=SERVICE)
    start = {"session_id": "wa-2", "channel": "chat"}
    assert (await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT)).is_success
    buffer = ports.session_buffer
    assert buffer is not None
    # Buffered before the API refused NUL: the message is kept as it came.
    key = SessionKey(ports.ledger.subject_id_for("t1", "lead", "crm-1"), SessionId("wa-2"))
    await buffer.append(key, Message(Speaker.SUBJECT, f"hello{NUL}"))

    await ok(await http.get("/v1/subjects/me/sessions/wa-2", headers=AGENT))
    await ok(await http.get("/v1/subjects/me/sessions/wa-2/messages", headers=AGENT))
    ended = await ok(await http.post("/v1/subjects/me/sessions/wa-2/end", json={}, headers=AGENT))

    assert ended["message_count"] == 1
