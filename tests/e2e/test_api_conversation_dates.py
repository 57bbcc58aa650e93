"""Over HTTP: a relayed conversation keeps its own times. Sessions start at `started_at`,
messages carry `at` (checked: aware, not in the future, in order), and the notes, profile
versions and field histories they lead to are dated by them, not by the API's clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, build_ports, line, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

LEAD = "crm-530"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD))
SERVICE = bearer(token(Role.SERVICE))
NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)  # when the API records everything
APRIL = datetime(2026, 4, 2, 14, 0, tzinfo=UTC)  # when the first call happened
MAY = datetime(2026, 5, 6, 10, 0, tzinfo=UTC)  # when the lead confirmed


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(NOW))


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as client:
        body = {"kind": "lead", "external_ref": LEAD}
        assert (await client.post("/v1/subjects", json=body, headers=SERVICE)).is_success
        yield client


async def start(http: httpx.AsyncClient, session_id: str, **extra: Any) -> httpx.Response:
    body = {"session_id": session_id, "channel": "voice", **extra}
    return await http.post("/v1/subjects/me/sessions", json=body, headers=AGENT)


async def say(
    http: httpx.AsyncClient,
    session_id: str,
    role: str,
    text: str,
    at: datetime | str | None,
    **marks: str,
) -> httpx.Response:
    """The agent's lines with its token, the subject's relayed by the channel."""
    body: dict[str, Any] = {"role": role, "text": text, **marks}
    if at is not None:
        body["at"] = at if isinstance(at, str) else at.isoformat()
    url = f"/v1/subjects/me/sessions/{session_id}/messages"
    return await http.post(**line(url, body, AGENT))


def refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "ConversationTimeError"
    assert response.json()["field"] == field


async def test_notes_versions_and_histories_are_dated_by_the_conversations(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given an April call relayed in May: the lead names their warehouse
    assert (await start(http, "call-apr", started_at=APRIL.isoformat())).status_code == 201
    assert (await say(http, "call-apr", "agent", "Where do you store stock?", APRIL)).is_success
    later = APRIL + timedelta(minutes=3)
    assert (await say(http, "call-apr", "subject", "Our stock sits in Antwerp.", later)).is_success
    proposal = {
        "field": "warehouse",
        "value": {"type": "text", "value": "Antwerp"},
        "origin": "stated",
        "evidence": {"session_id": "call-apr", "message_index": 1, "quote": "in Antwerp"},
    }
    body = {"summary": {"text": "Call about stock and storage"}, "proposals": [proposal]}
    ended = await http.post("/v1/subjects/me/sessions/call-apr/end", json=body, headers=AGENT)
    assert ended.status_code == 200, ended.text
    change_id = ended.json()["proposals"][0]["change_id"]

    # and a May call in which the lead confirms it
    assert (await start(http, "call-may", started_at=MAY.isoformat())).is_success
    asked = await say(http, "call-may", "agent", "Still Antwerp?", MAY, asks=change_id)
    assert asked.is_success
    confirmed_at = MAY + timedelta(minutes=1)
    said = await say(http, "call-may", "subject", "Yes, that is right.", confirmed_at)
    assert said.is_success
    url = "/v1/subjects/me/sessions/call-may/end"
    ended = await http.post(url, json={}, headers=AGENT)
    assert ended.json()["decided"][0]["status"] == "confirmed"

    # Then the profile version and the field history carry May's time, not the API's
    profile = (await http.get("/v1/subjects/me/profile", headers=AGENT)).json()
    assert datetime.fromisoformat(profile["at"]) == confirmed_at
    version = (await http.get("/v1/subjects/me/profile/versions/1", headers=AGENT)).json()
    assert datetime.fromisoformat(version["at"]) == confirmed_at
    history = (await http.get("/v1/subjects/me/profile/history", headers=AGENT)).json()
    assert [datetime.fromisoformat(h["at"]) for h in history["entries"]] == [confirmed_at]

    # and the notes are dated by the calls: the field by the April call that said it
    context = (await http.post("/v1/subjects/me/context", json={}, headers=AGENT)).json()
    assert [(n["ref"], n["on"]) for n in context["profile"]] == [("warehouse", "2026-04-02")]
    sessions = {n["ref"]: n["on"] for n in context["recent_sessions"]}
    assert sessions == {"call-apr": "2026-04-02"}
    assert "2026-05-20" not in str(context["profile"])


async def test_a_session_cannot_start_in_the_future_or_without_a_timezone(
    http: httpx.AsyncClient,
) -> None:
    refused(
        await start(http, "c1", started_at=(NOW + timedelta(hours=1)).isoformat()), "started_at"
    )
    refused(await start(http, "c2", started_at="2026-04-02T14:00:00"), "started_at")
    # a caller's clock a little ahead is tolerated
    assert (
        await start(http, "c3", started_at=(NOW + timedelta(seconds=30)).isoformat())
    ).is_success


async def test_messages_must_follow_the_start_and_each_other(http: httpx.AsyncClient) -> None:
    assert (await start(http, "call-1", started_at=APRIL.isoformat())).status_code == 201
    refused(await say(http, "call-1", "subject", "Hello.", APRIL - timedelta(minutes=1)), "at")
    assert (await say(http, "call-1", "subject", "Hello.", APRIL + timedelta(minutes=5))).is_success
    refused(await say(http, "call-1", "subject", "Again.", APRIL + timedelta(minutes=4)), "at")
    refused(await say(http, "call-1", "subject", "Later.", NOW + timedelta(hours=2)), "at")
    # without a time, a message is dated now, which follows everything said before
    assert (await say(http, "call-1", "subject", "Bye.", None)).is_success
    transcript = await http.get("/v1/subjects/me/sessions/call-1/messages", headers=AGENT)
    times = [datetime.fromisoformat(m["at"]) for m in transcript.json()["messages"]]
    assert times == [APRIL + timedelta(minutes=5), NOW]
