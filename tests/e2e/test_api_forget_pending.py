"""Over HTTP: forgetting covers what is pending. A field that is only proposed, or whose
proposals were rejected, is forgotten like a confirmed one: its pending proposals are
rejected (status `forgotten`), every proposal's content is redacted, the memories of its
slot and of its evidence leave the backend, and the answer names what was done."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import bearer, token
from support.api_steps import AGENT, a_lead, ok, said, sync

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.memory.record_ids import namespace_for
from factledger.testing.manual_clock import ManualClock

REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
SAID = "Our budget is forty thousand euros."
FORGET = {"field": "budget", "reason": "the subject asked"}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))


async def backend_texts(ports: Runtime, subject_id: str) -> list[str]:
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(UUID(subject_id)))
    return [m.text for m in memories]


async def a_lead_who_said_the_budget(http: httpx.AsyncClient, ports: Runtime) -> str:
    """A lead who stated a budget in a session, synced: the backend holds a memory of it."""
    subject_id = await a_lead(http)
    await said(http, SAID)
    await sync(ports)
    texts = await backend_texts(ports, subject_id)
    assert any("forty thousand" in text for text in texts)
    return subject_id


async def propose(
    http: httpx.AsyncClient, value: str, version: int = 0, *, evidenced: bool = True
) -> str:
    body: dict[str, Any] = {
        "based_on_version": version,
        "field": "budget",
        "value": {"type": "text", "value": value},
        "origin": "stated",
        "condition": "if the board agrees",
        "rationale": "said in the first chat",
        "evidence": {"session_id": "wa-1", "message_index": 0, "quote": "forty thousand"},
    }
    if not evidenced:
        body.pop("evidence")
        body["origin"] = "inferred"
    created = await ok(await http.post("/v1/subjects/me/proposals", json=body, headers=AGENT), 201)
    return str(created["change_id"])


async def read_proposal(http: httpx.AsyncClient, subject_id: str, change_id: str) -> Any:
    url = f"/v1/subjects/{subject_id}/proposals/{change_id}"
    return await ok(await http.get(url, headers=REVIEWER))


async def assert_redacted(http: httpx.AsyncClient, subject_id: str, change_id: str) -> str:
    read = await read_proposal(http, subject_id, change_id)
    assert read["redacted"] is True
    assert [read[k] for k in ("value", "condition", "evidence", "rationale")] == [None] * 4
    return str(read["status"])


async def assert_nothing_of_the_budget_left(
    http: httpx.AsyncClient, ports: Runtime, subject_id: str
) -> None:
    """The review queue, the field's history and the event log carry none of the proposals'
    content, and (once synced) the backend none of the memories of those words. (The
    transcript stays under the subject's key: forgetting a field does not shred it.)"""
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    assert "budget" not in str(queue)
    history_url = f"/v1/subjects/{subject_id}/profile/history"
    events = await ok(await http.get(f"/v1/subjects/{subject_id}/events", headers=REVIEWER))
    history = await ok(await http.get(history_url, headers=REVIEWER))
    for read in (str(events), str(history)):
        for word in ("40000", "45000", "board agrees", "first chat"):
            assert word not in read
    await sync(ports)
    assert not any("forty" in text for text in await backend_texts(ports, subject_id))


async def test_forgetting_a_field_that_is_only_proposed_rejects_and_redacts_it(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given a budget that was said and only proposed
    subject_id = await a_lead_who_said_the_budget(http, ports)
    pending = await propose(http, "40000 EUR")

    # When the subject asks to forget it
    done = await ok(await http.post("/v1/subjects/me/forget", json=FORGET, headers=AGENT))

    # Then the answer names the field, the new version and the proposal it rejected
    assert done == {
        "subject_id": subject_id,
        "applied": True,
        "profile_version": 1,
        "field": "budget",
        "memory_id": None,
        "rejected_changes": [pending],
        "redacted_changes": [pending],
        # the line that stated it: its words are unreadable everywhere now
        "forgotten_lines": [{"session_id": "wa-1", "message_index": 0}],
        "lines_not_erased": [],
    }
    # and the proposal is no longer pending, with its content unreadable
    assert await assert_redacted(http, subject_id, pending) == "forgotten"
    approve = f"/v1/subjects/{subject_id}/proposals/{pending}/approve"
    assert (await http.post(approve, json={}, headers=REVIEWER)).status_code == 409
    await assert_nothing_of_the_budget_left(http, ports, subject_id)
    profile = await ok(await http.get("/v1/subjects/me/profile", headers=AGENT))
    assert "budget" not in profile["fields"]


async def test_forgetting_a_field_whose_proposal_was_rejected_redacts_it(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given a budget proposal a reviewer rejected
    subject_id = await a_lead_who_said_the_budget(http, ports)
    rejected = await propose(http, "40000 EUR")
    reject = f"/v1/subjects/{subject_id}/proposals/{rejected}/reject"
    await ok(await http.post(reject, json={"reason": "not a budget"}, headers=REVIEWER))

    # When the subject asks to forget the budget
    done = await ok(await http.post("/v1/subjects/me/forget", json=FORGET, headers=AGENT))

    # Then nothing was pending to reject, but the rejected proposal's content is gone too
    assert (done["field"], done["rejected_changes"], done["redacted_changes"]) == (
        "budget",
        [],
        [rejected],
    )
    assert await assert_redacted(http, subject_id, rejected) == "rejected"
    await assert_nothing_of_the_budget_left(http, ports, subject_id)
    # and once nothing of it is left, forgetting again says so
    again = await http.post("/v1/subjects/me/forget", json=FORGET, headers=AGENT)
    assert again.status_code == 409
    assert again.json()["error"] == "FieldNotPresentError"


async def test_forgetting_a_confirmed_field_with_a_pending_proposal_takes_both(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given a confirmed budget and a newer pending one
    subject_id = await a_lead_who_said_the_budget(http, ports)
    confirmed = await propose(http, "40000 EUR")
    approve = f"/v1/subjects/{subject_id}/proposals/{confirmed}/approve"
    await ok(await http.post(approve, json={}, headers=REVIEWER))
    pending = await propose(http, "45000 EUR", 1)

    done = await ok(await http.post("/v1/subjects/me/forget", json=FORGET, headers=AGENT))

    assert (done["profile_version"], done["rejected_changes"]) == (2, [pending])
    assert done["redacted_changes"] == [confirmed, pending]
    assert await assert_redacted(http, subject_id, confirmed) == "confirmed"
    assert await assert_redacted(http, subject_id, pending) == "forgotten"
    await assert_nothing_of_the_budget_left(http, ports, subject_id)


async def test_a_new_proposal_after_the_forget_can_be_forgotten_again(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    subject_id = await a_lead_who_said_the_budget(http, ports)
    first = await propose(http, "40000 EUR")
    await ok(await http.post("/v1/subjects/me/forget", json=FORGET, headers=AGENT))
    # The forgotten line can evidence nothing now (its words are gone): a proposal without it
    second = await propose(http, "50000 EUR", 1, evidenced=False)
    done = await ok(await http.post("/v1/subjects/me/forget", json=FORGET, headers=AGENT))
    # Only what came after the first forget is named: the first one's key was already gone
    assert (done["rejected_changes"], done["redacted_changes"]) == ([second], [second])
    assert await assert_redacted(http, subject_id, first) == "forgotten"
    assert await assert_redacted(http, subject_id, second) == "forgotten"


async def test_forgetting_a_memory_by_id_names_the_memory(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    subject_id = await a_lead_who_said_the_budget(http, ports)
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(UUID(subject_id)))
    (memory,) = [m for m in memories if "forty thousand" in m.text]
    forget = {"memory_id": memory.id, "reason": "the subject asked"}
    done = await ok(await http.post("/v1/subjects/me/forget", json=forget, headers=AGENT))
    assert done == {
        "subject_id": subject_id,
        "applied": True,
        "profile_version": 0,
        "field": None,
        "memory_id": memory.id,
        "rejected_changes": [],
        "redacted_changes": [],
        # the line the memory was drawn from, as the backend names it
        "forgotten_lines": [{"session_id": "wa-1", "message_index": 0}],
        "lines_not_erased": [],
    }
    await sync(ports)
    assert not any("forty" in text for text in await backend_texts(ports, subject_id))
