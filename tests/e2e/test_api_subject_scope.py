"""Commands scoped by subject over HTTP: one `Idempotency-Key` used by the same principal
(`sub`) on two subjects runs once per subject and answers each with its own subject; a session
id used by one subject (or tenant) is invisible to every other."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, line, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

KEY = {"Idempotency-Key": "same-key-0001"}
REFS = ("crm-a", "crm-b")
# Two agent tokens of one principal (`sub`), bound to different subjects.
AGENTS = {ref: bearer(token(Role.AGENT, principal_id="bot", kind="lead", ref=ref)) for ref in REFS}
SERVICE = bearer(token(Role.SERVICE, principal_id="crm"))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="rev"))
CHANGE = "2f1e0c9a-3b4d-4e5f-8a6b-7c8d9e0f1a2b"
QUOTE = "Yes, we use Supplier A."


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


@pytest.fixture
async def subjects(http: httpx.AsyncClient) -> dict[str, str]:
    """Subject ids by reference, both registered in tenant t1."""
    ids = {}
    for ref in REFS:
        body = {"kind": "lead", "external_ref": ref}
        ids[ref] = (await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201))[
            "subject_id"
        ]
    return ids


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def fresh(response: httpx.Response) -> httpx.Response:
    """The command ran for this request: not a replay of another subject's answer."""
    assert "Idempotent-Replayed" not in response.headers, response.text
    return response


async def as_each_agent(
    http: httpx.AsyncClient, path: str, body: dict[str, Any], status: int = 200
) -> dict[str, Any]:
    """Sends the same keyed command as each agent; returns each answer by reference."""
    answers = {}
    for ref in REFS:
        headers = {**AGENTS[ref], **KEY}
        answers[ref] = await ok(fresh(await http.post(path, json=body, headers=headers)), status)
    return answers


async def record_session(http: httpx.AsyncClient, ref: str, session_id: str = "s-1") -> None:
    """A recorded session of the subject in which it says `QUOTE` (message 0)."""
    base = f"/v1/subjects/me/sessions/{session_id}"
    start = {"session_id": session_id, "channel": "chat"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENTS[ref]), 201)
    message = {"role": "subject", "text": QUOTE}
    await ok(await http.post(**line(f"{base}/messages", message, AGENTS[ref])))
    await ok(await http.post(f"{base}/end", json={}, headers=AGENTS[ref]))


async def propose(http: httpx.AsyncClient, ref: str, *, field: str = "supplier") -> None:
    body = {
        "change_id": CHANGE,
        "field": field,
        "value": {"type": "text", "value": f"Supplier of {ref}"},
        "origin": "inferred",
        "rationale": "mentioned",
    }
    await ok(await http.post("/v1/subjects/me/proposals", json=body, headers=AGENTS[ref]), 201)


def assert_each_own(answers: dict[str, Any], subjects: dict[str, str]) -> None:
    assert {ref: str(a["subject_id"]) for ref, a in answers.items()} == subjects


# One keyed command per route that takes an Idempotency-Key.


async def test_a_keyed_session_start_starts_each_subjects_session(
    http: httpx.AsyncClient, subjects: dict[str, str]
) -> None:
    body = {"session_id": "s-1", "channel": "chat"}
    answers = await as_each_agent(http, "/v1/subjects/me/sessions", body, 201)
    assert_each_own(answers, subjects)


async def test_a_keyed_append_appends_to_each_subjects_session(
    http: httpx.AsyncClient, subjects: dict[str, str]
) -> None:
    start = {"session_id": "s-1", "channel": "chat"}
    for ref in REFS:
        await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENTS[ref]), 201)
    body = {"role": "agent", "text": "Do you use Supplier A?"}
    answers = await as_each_agent(http, "/v1/subjects/me/sessions/s-1/messages", body)
    assert [a["index"] for a in answers.values()] == [0, 0]
    for ref in REFS:
        read = await ok(await http.get("/v1/subjects/me/sessions/s-1", headers=AGENTS[ref]))
        assert (read["subject_id"], read["message_count"]) == (subjects[ref], 1)


async def test_a_keyed_end_ends_each_subjects_session(
    http: httpx.AsyncClient, subjects: dict[str, str]
) -> None:
    start = {"session_id": "s-1", "channel": "chat"}
    message = {"role": "subject", "text": QUOTE}
    for ref in REFS:
        await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENTS[ref]), 201)
        path = "/v1/subjects/me/sessions/s-1/messages"
        await ok(await http.post(**line(path, message, AGENTS[ref])))
    answers = await as_each_agent(http, "/v1/subjects/me/sessions/s-1/end", {})
    assert_each_own(answers, subjects)
    assert [a["message_count"] for a in answers.values()] == [1, 1]
    for ref in REFS:
        gone = await http.get("/v1/subjects/me/sessions/s-1", headers=AGENTS[ref])
        assert gone.status_code == 404


@pytest.mark.parametrize("change_id", [CHANGE, None], ids=["caller-id", "derived-id"])
async def test_a_keyed_proposal_is_proposed_to_each_subject(
    http: httpx.AsyncClient, subjects: dict[str, str], change_id: str | None
) -> None:
    body = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier A"},
        "origin": "inferred",
        "rationale": "mentioned",
        **({} if change_id is None else {"change_id": change_id}),
    }
    answers = await as_each_agent(http, "/v1/subjects/me/proposals", body, 201)
    assert_each_own(answers, subjects)
    for ref, answer in answers.items():
        path = f"/v1/subjects/me/proposals/{answer['change_id']}"
        assert (await ok(await http.get(path, headers=AGENTS[ref])))["status"] == "pending"


async def test_a_keyed_question_asks_each_subject_about_its_own_change(
    http: httpx.AsyncClient, subjects: dict[str, str]
) -> None:
    # The agent asks about the change, the channel relays the subject's yes (ADR 0017).
    start = {"session_id": "s-2", "channel": "chat"}
    for ref in REFS:
        await propose(http, ref)
        await record_session(http, ref)
        await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENTS[ref]), 201)
    question = {"role": "agent", "text": "Is Supplier A right?", "asks": CHANGE}
    answers = await as_each_agent(http, "/v1/subjects/me/sessions/s-2/messages", question)
    assert [a["index"] for a in answers.values()] == [0, 0]
    for ref in REFS:
        said = {"role": "subject", "text": "Yes, that's right."}
        await ok(
            await http.post(**line("/v1/subjects/me/sessions/s-2/messages", said, AGENTS[ref]))
        )
        ended = await ok(
            await http.post("/v1/subjects/me/sessions/s-2/end", json={}, headers=AGENTS[ref])
        )
        assert ended["subject_id"] == subjects[ref]
        assert [(d["change_id"], d["status"]) for d in ended["decided"]] == [(CHANGE, "confirmed")]


@pytest.mark.parametrize(
    ("decision", "body", "status"),
    [("approve", {}, "confirmed"), ("reject", {"reason": "not stated"}, "rejected")],
)
async def test_a_keyed_review_decides_each_subjects_change(
    http: httpx.AsyncClient,
    subjects: dict[str, str],
    decision: str,
    body: dict[str, Any],
    status: str,
) -> None:
    for ref in REFS:
        await propose(http, ref)
    for ref in REFS:
        path = f"/v1/subjects/{subjects[ref]}/proposals/{CHANGE}/{decision}"
        answer = await ok(fresh(await http.post(path, json=body, headers={**REVIEWER, **KEY})))
        assert (answer["subject_id"], answer["status"]) == (subjects[ref], status)


async def test_a_keyed_forget_forgets_each_subjects_field(
    http: httpx.AsyncClient, subjects: dict[str, str]
) -> None:
    for ref in REFS:
        await propose(http, ref)
        path = f"/v1/subjects/{subjects[ref]}/proposals/{CHANGE}/approve"
        await ok(await http.post(path, json={}, headers=REVIEWER))
    body = {"field": "supplier", "reason": "the subject asked"}
    answers = await as_each_agent(http, "/v1/subjects/me/forget", body)
    assert_each_own(answers, subjects)
    assert [a["applied"] for a in answers.values()] == [True, True]
    for ref in REFS:
        profile = await ok(await http.get("/v1/subjects/me/profile", headers=AGENTS[ref]))
        assert "supplier" not in profile["fields"]


async def test_a_keyed_registration_registers_each_subject(http: httpx.AsyncClient) -> None:
    registered = []
    for ref in REFS:
        body = {"kind": "lead", "external_ref": ref}
        response = fresh(await http.post("/v1/subjects", json=body, headers={**SERVICE, **KEY}))
        answer = await ok(response, 201)
        assert (answer["external_ref"], answer["created"]) == (ref, True)
        registered.append(UUID(answer["subject_id"]))
    assert len(set(registered)) == 2


async def test_a_retry_on_the_same_subject_still_replays(
    http: httpx.AsyncClient, subjects: dict[str, str]
) -> None:
    body = {"field": "supplier", "origin": "inferred", "value": {"type": "text", "value": "A"}}
    headers = {**AGENTS["crm-a"], **KEY}
    first = await ok(await http.post("/v1/subjects/me/proposals", json=body, headers=headers), 201)
    again = await http.post("/v1/subjects/me/proposals", json=body, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert await ok(again, 201) == first


# Session ids belong to their subject.


async def test_a_session_id_used_in_another_tenant_is_free_in_this_one() -> None:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as http:
        started = {}
        for tenant in ("t1", "t2"):
            service = bearer(token(Role.SERVICE, tenant=tenant))
            body = {"kind": "lead", "external_ref": "crm-a"}
            await ok(await http.post("/v1/subjects", json=body, headers=service), 201)
            agent = bearer(token(Role.AGENT, tenant=tenant, kind="lead", ref="crm-a"))
            # Another channel, so nothing but the id is shared with the other tenant's session.
            start = {"session_id": "s-1", "channel": "chat" if tenant == "t1" else "voice"}
            path = "/v1/subjects/me/sessions"
            started[tenant] = await ok(await http.post(path, json=start, headers=agent), 201)
        assert started["t1"]["subject_id"] != started["t2"]["subject_id"]
        assert (started["t2"]["channel"], started["t2"]["message_count"]) == ("voice", 0)


async def test_a_session_id_of_another_subject_is_invisible_and_cannot_be_squatted(
    http: httpx.AsyncClient, subjects: dict[str, str]
) -> None:
    a, b = AGENTS["crm-a"], AGENTS["crm-b"]
    base = "/v1/subjects/me/sessions"
    await ok(await http.post(base, json={"session_id": "s-1", "channel": "chat"}, headers=a), 201)
    message = {"role": "subject", "text": "A's words"}
    await ok(await http.post(**line(f"{base}/s-1/messages", message, a)))

    # B sees no session s-1 before starting its own: the same 404 as for an unused id
    for path in (f"{base}/s-1", f"{base}/s-unused"):
        missing = await http.get(path, headers=b)
        assert (missing.status_code, missing.json()["error"]) == (404, "SessionNotActiveError")
    ended = await http.post(f"{base}/s-1/end", json={}, headers=b)
    assert ended.status_code == 404

    # B starts s-1 on another channel, appends and ends it; A's session is untouched
    start = {"session_id": "s-1", "channel": "voice"}
    mine = await ok(await http.post(base, json=start, headers=b), 201)
    assert (mine["subject_id"], mine["channel"]) == (subjects["crm-b"], "voice")
    await ok(await http.post(**line(f"{base}/s-1/messages", message, b)))
    await ok(await http.post(f"{base}/s-1/end", json={}, headers=b))
    theirs = await ok(await http.get(f"{base}/s-1", headers=a))
    assert (theirs["subject_id"], theirs["message_count"]) == (subjects["crm-a"], 1)
    texts = await ok(await http.get(f"{base}/s-1/messages", headers=a))
    assert [m["text"] for m in texts["messages"]] == ["A's words"]
