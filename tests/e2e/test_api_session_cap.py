"""The session message cap holds at append time: a session holding MAX_MESSAGES refuses the
next message with a 422 naming the cap, and can still be ended (it once took every message,
then refused to end with more than the cap, and stayed active for ever)."""

from __future__ import annotations

import httpx
from support.api_harness import bearer, line, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.domain.sessions import MAX_MESSAGES
from factledger.domain.transcript import Message
from factledger.domain.transcript import Role as Speaker

AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
SERVICE = bearer(token(Role.SERVICE))
SESSIONS = "/v1/subjects/me/sessions"


async def test_the_message_past_the_cap_is_a_422_and_the_session_still_ends(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    register = {"kind": "lead", "external_ref": "crm-1"}
    assert (await http.post("/v1/subjects", json=register, headers=SERVICE)).status_code == 201
    start = {"session_id": "long-1", "channel": "chat"}
    assert (await http.post(SESSIONS, json=start, headers=AGENT)).status_code == 201
    # Filled through the buffer itself: 2,000 HTTP round trips would only slow the test.
    buffer = ports.session_buffer
    assert buffer is not None
    key = SessionKey(ports.ledger.subject_id_for("t1", "lead", "crm-1"), SessionId("long-1"))
    for n in range(MAX_MESSAGES - 1):
        await buffer.append(key, Message(Speaker.SUBJECT, f"turn {n}"))
    last = {"role": "subject", "text": "the last one that fits"}
    kept = await http.post(**line(f"{SESSIONS}/long-1/messages", last, AGENT))
    assert kept.status_code == 200, kept.text
    assert kept.json()["index"] == MAX_MESSAGES - 1

    refused = await http.post(
        **line(f"{SESSIONS}/long-1/messages", {"role": "subject", "text": "one more"}, AGENT)
    )

    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == "SessionFullError"
    assert str(MAX_MESSAGES) in refused.json()["detail"]
    ended = await http.post(f"{SESSIONS}/long-1/end", json={}, headers=AGENT)
    assert ended.status_code == 200, ended.text
    assert ended.json()["message_count"] == MAX_MESSAGES
    assert (await http.get(f"{SESSIONS}/long-1", headers=AGENT)).status_code == 404
