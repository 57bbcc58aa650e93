"""Over HTTP: forged confirmations are refused with the rule's name, and so is a stated
proposal that drops its sentence's hedge; nothing of a refused request is recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, line, token
from support.key_stores import pinned_subject_id

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role

LEAD, OTHER = "crm-310", "crm-311"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="voice-bot"))
OTHER_AGENT = bearer(token(Role.AGENT, kind="lead", ref=OTHER))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-3"))
LEAD_ID = str(pinned_subject_id("t1", "lead", LEAD))


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as client:
        for ref in (LEAD, OTHER):
            body = {"kind": "lead", "external_ref": ref}
            assert (await client.post("/v1/subjects", json=body, headers=SERVICE)).is_success
        yield client


async def converse(
    http: httpx.AsyncClient,
    session_id: str,
    lines: list[tuple[str, str]],
    *,
    agent: dict[str, str] = AGENT,
    asks: str | None = None,
    **end: Any,
) -> httpx.Response:
    """The agent's lines with its token (each asking about `asks` when given), the subject's
    relayed by the channel."""
    start = {"session_id": session_id, "channel": "voice"}
    assert (await http.post("/v1/subjects/me/sessions", json=start, headers=agent)).is_success
    for role, text in lines:
        url = f"/v1/subjects/me/sessions/{session_id}/messages"
        said: dict[str, Any] = {"role": role, "text": text}
        if role == "agent" and asks is not None:
            said["asks"] = asks
        assert (await http.post(**line(url, said, agent))).is_success
    return await http.post(f"/v1/subjects/me/sessions/{session_id}/end", json=end, headers=agent)


def stated(field: str, value: str, session_id: str, index: int, quote: str) -> dict[str, Any]:
    return {
        "field": field,
        "value": {"type": "text", "value": value},
        "origin": "stated",
        "evidence": {"session_id": session_id, "message_index": index, "quote": quote},
    }


async def proposed_fleet(http: httpx.AsyncClient) -> str:
    """call-1: the lead names their fleet (#1) and later says "Yes, all good." (#3); the agent
    proposes the fleet from #1 when the call ends."""
    ended = await converse(
        http,
        "call-1",
        [
            ("agent", "How many vans do you run?"),
            ("subject", "We run thirty electric vans."),
            ("agent", "Anything else?"),
            ("subject", "Yes, all good."),
        ],
        proposals=[stated("fleet", "thirty electric vans", "call-1", 1, "thirty electric vans")],
    )
    assert ended.status_code == 200, ended.text
    return str(ended.json()["proposals"][0]["change_id"])


async def confirm(
    http: httpx.AsyncClient, change_id: str, session_id: str, index: int, quote: str
) -> httpx.Response:
    """The channel relays the subject's confirmation (an agent's token may not)."""
    evidence = {"session_id": session_id, "message_index": index, "quote": quote}
    url = f"/v1/subjects/{LEAD_ID}/proposals/{change_id}/confirm"
    return await http.post(url, json={"evidence": evidence}, headers=SERVICE)


def refused(response: httpx.Response, error: str) -> str:
    assert response.status_code == 422, response.text
    assert response.json()["error"] == error
    return str(response.json()["detail"])


async def test_the_proposals_own_quote_cannot_confirm_it(http: httpx.AsyncClient) -> None:
    change = await proposed_fleet(http)
    response = await confirm(http, change, "call-1", 1, "thirty electric vans")
    assert "own evidence" in refused(response, "ConfirmationReusesEvidenceError")


async def test_an_earlier_message_cannot_confirm(http: httpx.AsyncClient) -> None:
    change = await proposed_fleet(http)
    response = await confirm(http, change, "call-1", 3, "Yes, all good")
    assert "recorded before" in refused(response, "ConfirmationBeforeProposalError")


async def test_an_agent_line_cannot_confirm(http: httpx.AsyncClient) -> None:
    change = await proposed_fleet(http)
    later = [("agent", "So thirty vans, correct?"), ("subject", "Hmm.")]
    assert (await converse(http, "call-2", later)).status_code == 200
    response = await confirm(http, change, "call-2", 0, "So thirty vans, correct?")
    assert "subject's own message" in refused(response, "ConfirmationNotFromSubjectError")


async def test_another_subjects_session_cannot_confirm(http: httpx.AsyncClient) -> None:
    change = await proposed_fleet(http)
    theirs = [("subject", "Yes, thirty vans is right.")]
    assert (await converse(http, "call-9", theirs, agent=OTHER_AGENT)).status_code == 200
    response = await confirm(http, change, "call-9", 0, "Yes, thirty vans is right")
    refused(response, "EvidenceNotFoundError")


async def test_the_subjects_later_words_confirm_and_a_reviewer_needs_none(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    change = await proposed_fleet(http)
    unasked = [("agent", "Anything else?"), ("subject", "Yes, still thirty.")]
    assert (await converse(http, "call-2", unasked)).status_code == 200
    response = await confirm(http, change, "call-2", 1, "Yes, still thirty")
    assert "did not ask about change" in refused(response, "InvalidParameterError")
    later = [("agent", "Still thirty vans?"), ("subject", "Yes, that is right.")]
    answered = await converse(http, "call-3", later, asks=change)
    assert answered.status_code == 200, answered.text
    assert [(d["change_id"], d["status"]) for d in answered.json()["decided"]] == [
        (change, "confirmed")
    ]

    other = await converse(
        http,
        "call-4",
        [("subject", "Our depot is in Ghent.")],
        proposals=[stated("depot", "Ghent", "call-4", 0, "Our depot is in Ghent")],
    )
    depot = other.json()["proposals"][0]["change_id"]
    lead = ports.ledger.subject_id_for("t1", "lead", LEAD)
    approve = f"/v1/subjects/{lead}/proposals/{depot}/approve"
    approved = await http.post(approve, json={}, headers=REVIEWER)
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "confirmed"


HEDGED = "Perhaps we add a second depot in Porto, depending on the lease terms."


async def test_a_quote_that_drops_its_sentences_hedge_is_refused_and_nothing_is_recorded(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    cut = stated("expansion", "second depot in Porto", "call-4", 0, "add a second depot in Porto")
    response = await converse(http, "call-4", [("subject", HEDGED)], proposals=[cut])
    detail = refused(response, "HedgeDroppedError")
    assert "tentative" in detail
    assert response.json()["field"] == "condition"
    lead = ports.ledger.subject("t1", ports.ledger.subject_id_for("t1", "lead", LEAD))
    assert "call-4" not in lead.sessions

    # The corrected end (the buffer was kept) records the session and the kept condition.
    kept = {**cut, "condition": "depending on the lease terms"}
    url = "/v1/subjects/me/sessions/call-4/end"
    ended = await http.post(url, json={"proposals": [kept]}, headers=AGENT)
    assert ended.status_code == 200, ended.text
    assert ended.json()["proposals"][0]["condition"] == "depending on the lease terms"


async def test_a_proposal_posted_alone_is_held_to_the_same_rule(http: httpx.AsyncClient) -> None:
    assert (await converse(http, "call-5", [("subject", HEDGED)])).status_code == 200
    cut = stated("expansion", "second depot", "call-5", 0, "a second depot in Porto")
    response = await http.post("/v1/subjects/me/proposals", json=cut, headers=AGENT)
    assert "tentative" in refused(response, "HedgeDroppedError")
