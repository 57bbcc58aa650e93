"""Over HTTP: the review queue at volume. Every pending proposal is reachable by cursor, every
filter narrows all of them (not a first batch), counts are exact, identical proposals group
across subjects and one decision on a group records one decision per subject, once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from support.api_harness import bearer, token
from support.api_steps import ok
from support.queue_seed import INFERENCE, MODEL, SeededQueue, seed_many

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.ledger.commands import ProposeChange
from factledger.domain.events import ChangeConfirmed, ChangeRejected
from factledger.domain.provenance import Operation, Origin
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
N = 30  # subjects: 30 supplier + 30 insights + 3 budget proposals
PENDING = 63


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))


@pytest.fixture
def seeded(ports: Runtime, clock: ManualClock) -> SeededQueue:
    return seed_many(ports, clock, n=N)


async def page(http: httpx.AsyncClient, **params: Any) -> Any:
    return await ok(await http.get("/v1/proposals/pending", params=params, headers=REVIEWER))


async def every_page(http: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    items, cursor = [], None
    while True:
        found = await page(http, **params, **({"cursor": cursor} if cursor else {}))
        items.extend(found["items"])
        cursor = found["next_cursor"]
        if cursor is None:
            return items


async def test_cursors_reach_every_pending_proposal_once_in_order(
    http: httpx.AsyncClient, seeded: SeededQueue
) -> None:
    first = await page(http, limit=20)
    assert first["total"] == PENDING
    assert first["previous_cursor"] is None
    items = await every_page(http, limit=20)
    ids = [i["change_id"] for i in items]
    assert len(ids) == PENDING == len(set(ids))
    assert [i["proposed_at"] for i in items] == sorted(i["proposed_at"] for i in items)

    second = await page(http, limit=20, cursor=first["next_cursor"])
    back = await page(http, limit=20, cursor=second["previous_cursor"])
    assert [i["change_id"] for i in back["items"]] == [i["change_id"] for i in first["items"]]
    assert back["previous_cursor"] is None
    assert back["next_cursor"] is not None


@pytest.mark.parametrize(
    ("params", "count"),
    [
        ({"field": "supplier"}, 30),
        ({"origin": "inferred"}, 33),
        ({"origin": "stated"}, 30),
        ({"kind": "lead"}, 33),
        ({"kind": "customer", "field": "supplier"}, 15),
        ({"proposer": "model:extractor-v1"}, 33),
        ({"proposer": "agent:agent-7"}, 30),
        # The evidence's conversation: the statements quoting the 8 support calls.
        ({"conversation_type": "support-call"}, 8),
        ({"q": "crm-001"}, 21),  # crm-0010 .. crm-0019: 10 subjects, and one budget
        ({"q": "SUPP"}, 30),  # field names too, whatever the case
        ({"q": "100%_"}, 0),  # LIKE's wildcards are searched as text
        ({"older_than": "1d"}, 0),
        ({"newer_than": "1d"}, PENDING),
        ({"field": ""}, PENDING),  # blank: unset, as a form sends it
    ],
)
async def test_each_filter_counts_exactly_over_every_pending_proposal(
    http: httpx.AsyncClient, seeded: SeededQueue, params: dict[str, str], count: int
) -> None:
    items = await every_page(http, limit=7, **params)
    assert len(items) == count
    assert (await page(http, limit=7, **params))["total"] == count


async def test_age_counts_from_the_ledgers_clock(
    http: httpx.AsyncClient, seeded: SeededQueue, clock: ManualClock
) -> None:
    clock.advance(timedelta(days=2))
    assert (await page(http, older_than="1d"))["total"] == PENDING
    assert (await page(http, older_than="3d"))["total"] == 0


async def test_an_item_says_when_it_was_said_not_only_when_it_was_recorded(
    http: httpx.AsyncClient, seeded: SeededQueue
) -> None:
    found = await page(http, field="supplier", q="crm-0000")
    (item,) = found["items"]
    assert datetime.fromisoformat(item["said_at"]) == seeded.said_at
    assert datetime.fromisoformat(item["proposed_at"]) - seeded.said_at > timedelta(days=300)
    assert item["subject_ref"] == "crm-0000"
    assert item["subject_kind"] == "lead"
    assert item["conversation_type"] == "support-call"
    inference = (await page(http, field="insights", q="crm-0000"))["items"][0]
    assert inference["said_at"] is None  # nobody said it


async def test_identical_proposals_group_across_subjects(
    http: httpx.AsyncClient, seeded: SeededQueue
) -> None:
    groups = await ok(await http.get("/v1/proposals/pending/groups", headers=REVIEWER))
    assert groups["total"] == 5  # the inference, three suppliers, the budget
    largest = groups["groups"][0]
    assert (largest["count"], largest["subjects"]) == (30, 30)
    assert largest["sample"]["display"] == INFERENCE
    assert [g["count"] for g in groups["groups"]] == [30, 10, 10, 10, 3]
    members = await every_page(http, group=largest["group"])
    assert {m["field"] for m in members} == {"insights"}
    assert len({m["subject_id"] for m in members}) == 30

    filtered = await ok(
        await http.get("/v1/proposals/pending/groups", params={"kind": "lead"}, headers=REVIEWER)
    )
    assert filtered["groups"][0]["count"] == 15


async def decide(http: httpx.AsyncClient, body: dict[str, Any], key: str) -> httpx.Response:
    headers = {**REVIEWER, "Idempotency-Key": key}
    return await http.post("/v1/proposals/pending/decisions", json=body, headers=headers)


async def test_one_decision_on_a_group_records_one_decision_per_subject_once(
    http: httpx.AsyncClient, seeded: SeededQueue, ports: Runtime
) -> None:
    found = await ok(await http.get("/v1/proposals/pending/groups", headers=REVIEWER))
    group, snapshot = found["groups"][0]["group"], found["snapshot"]
    body = {
        "decision": "reject",
        "reason": "a guess, not something they said",
        "filter": {"group": group},
        "snapshot": snapshot,
        "expected_count": 30,
    }
    first = await ok(await decide(http, body, "group-decision-1"))
    assert (first["decided"], first["refused"]) == (30, 0)
    again = await ok(await decide(http, body, "group-decision-1"))
    assert again["decided"] == 0  # nothing is left in the group, and nothing is doubled

    for subject_id in seeded.subjects:
        events = list(ports.ledger.events.get(subject_id))
        rejected = [e for e in events if isinstance(e, ChangeRejected)]
        assert len(rejected) == 1
        assert rejected[0].rejected_by == {"kind": "staff", "id": "staff-9"}
    assert (await page(http))["total"] == PENDING - 30


async def test_a_page_of_ticked_changes_is_decided_once_on_retry(
    http: httpx.AsyncClient, seeded: SeededQueue, ports: Runtime
) -> None:
    items = (await page(http, field="supplier", limit=5))["items"]
    picks = [{"subject_id": i["subject_id"], "change_id": i["change_id"]} for i in items]
    body = {"decision": "approve", "note": "checked", "changes": picks}
    first = await ok(await decide(http, body, "page-decision-1"))
    assert first["decided"] == 5
    retried = await ok(await decide(http, body, "page-decision-1"))
    assert retried["decided"] == 0
    assert [o["applied"] for o in retried["outcomes"]] == [False] * 5
    assert [o["error_type"] for o in retried["outcomes"]] == [None] * 5
    confirmed = [
        e
        for sid in seeded.subjects
        for e in ports.ledger.events.get(sid)
        if isinstance(e, ChangeConfirmed)
    ]
    assert len(confirmed) == 5
    assert (await page(http, field="supplier"))["total"] == 25


async def test_a_decision_on_a_filter_never_reaches_what_the_reviewer_did_not_see(
    http: httpx.AsyncClient, seeded: SeededQueue, ports: Runtime, clock: ManualClock
) -> None:
    seen = await page(http, field="budget")
    assert seen["total"] == 3
    ports.ledger.propose_change(
        ProposeChange(
            "t1",
            seeded.subjects[1],
            "budget",
            Operation.SET,
            TextValue("50k"),
            Origin.INFERRED,
            MODEL,
            0,
        )
    )
    # A proposal recorded after the page was read stays out, and a count too small is a 409.
    too_few = {
        "decision": "approve",
        "filter": {"field": "budget"},
        "snapshot": seen["snapshot"],
        "expected_count": 2,
    }
    refused = await decide(http, too_few, "filter-decision-1")
    assert refused.status_code == 409
    assert refused.json()["field"] == "expected_count"
    exact = {**too_few, "expected_count": 3}
    assert (await ok(await decide(http, exact, "filter-decision-2")))["decided"] == 3
    left = (await page(http, field="budget"))["items"]
    assert [(i["subject_id"], i["display"]) for i in left] == [(str(seeded.subjects[1]), "50k")]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"origin": "maybe"}, "origin"),
        ({"older_than": "7 years"}, "older_than"),
        ({"newer_than": "0d"}, "newer_than"),
        ({"cursor": "not a cursor!"}, "cursor"),
        ({"cursor": "Zm9v"}, "cursor"),  # well-formed, but not one the queue gave
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"proposer": "nobody"}, "proposer"),
        ({"group": "xyz"}, "group"),
        ({"subject_id": "12"}, "subject_id"),
        ({"q": "x" * 201}, "q"),
    ],
)
async def test_a_bad_filter_is_a_422_naming_the_parameter(
    http: httpx.AsyncClient, params: dict[str, str], field: str
) -> None:
    answer = await http.get("/v1/proposals/pending", params=params, headers=REVIEWER)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"decision": "approve"}, "changes"),
        (
            {"decision": "reject", "changes": [{"subject_id": "1", "change_id": "2"}]},
            "changes[0].subject_id",
        ),
        ({"decision": "approve", "filter": {"field": "x"}}, "expected_count"),
        (
            {
                "decision": "approve",
                "filter": {"origin": "x"},
                "snapshot": "cw",
                "expected_count": 1,
            },
            "filter.origin",
        ),
        (
            {"decision": "approve", "filter": {}, "snapshot": "Zm9v", "expected_count": 1},
            "snapshot",
        ),
        (
            {"decision": "approve", "filter": {}, "snapshot": "czE", "expected_count": 10_001},
            "expected_count",
        ),
        ({"decision": "maybe", "filter": {}}, "decision"),
    ],
)
async def test_a_bad_decision_is_a_422_naming_the_field(
    http: httpx.AsyncClient, seeded: SeededQueue, body: dict[str, Any], field: str
) -> None:
    answer = await decide(http, body, "bad-decision-1")
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field


async def test_another_tenant_sees_none_of_it(http: httpx.AsyncClient, seeded: SeededQueue) -> None:
    other = bearer(token(Role.REVIEWER, tenant="globex"))
    found = await ok(await http.get("/v1/proposals/pending", headers=other))
    assert (found["total"], found["items"]) == (0, [])
