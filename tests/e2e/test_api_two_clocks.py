"""Over HTTP, a history imported with its dates and approved in the present, read on both
clocks: `said` (what had the lead told us by then?) and `known` (what did our profile say
then?); and an import repaired by a corrected file that brings back a skipped session."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token
from support.key_stores import pinned_subject_id

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.client import AsyncFactledgerClient, NotFoundError
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock

LEAD = "crm-lead-31"
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-7"))
ANALYST = bearer(token(Role.ANALYST))
NDJSON = {"content-type": "application/x-ndjson"}
LEAD_ID = pinned_subject_id("t1", "lead", LEAD)
PROFILE = f"/v1/subjects/{LEAD_ID}/profile"

IMPORTED = datetime(2025, 6, 9, 9, 0, tzinfo=UTC)
FIRST_APPROVAL = datetime(2025, 6, 10, 9, 0, tzinfo=UTC)
SECOND_APPROVAL = datetime(2025, 6, 11, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(IMPORTED)


@pytest.fixture
def ports(clock: ManualClock) -> Runtime:
    return build_ports(clock)


def session_line(session_id: str, started_at: str, text: str, **message: str) -> str:
    return json.dumps(
        {
            "type": "session",
            "subject": {"kind": "lead", "ref": LEAD},
            "session_id": session_id,
            "channel": "chat",
            "started_at": started_at,
            "messages": [{"role": "subject", "text": text, **message}],
        }
    )


JANUARY = session_line(
    "chat-0114", "2025-01-14T09:00:00+00:00", "Right now we order from Initech. Our budget is 40k."
)
# The same session with a message dated before the session started: a bad line.
JANUARY_BROKEN = session_line(
    "chat-0114",
    "2025-01-14T09:00:00+00:00",
    "Right now we order from Initech. Our budget is 40k.",
    at="2025-01-13T09:00:00+00:00",
)
MARCH = session_line("chat-0303", "2025-03-03T10:00:00+00:00", "We have switched to Globex.")


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def imported(http: httpx.AsyncClient, *lines: str) -> Any:
    data = "".join(f"{line}\n" for line in lines).encode()
    return await ok(await http.post("/v1/import", content=data, headers={**SERVICE, **NDJSON}))


async def reviewed(ports: Runtime) -> None:
    """The post-recording step, as the sync worker runs it with the product's model."""
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    model = SessionProposer(ports.ledger, RuleExtractor(), Actor(ActorKind.MODEL, "rule@1"))
    worker = SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=model))
    assert (await worker.run_once()).dead == 0
    ports.catch_up()


async def pending(http: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    return {item["field"]: item for item in queue["items"]}


async def approve(http: httpx.AsyncClient, change: dict[str, Any]) -> None:
    url = f"/v1/subjects/{LEAD_ID}/proposals/{change['change_id']}/approve"
    await ok(await http.post(url, json={}, headers=REVIEWER))


async def as_of(http: httpx.AsyncClient, at: str, clock: str | None = None) -> httpx.Response:
    params = {"as_of": at} | ({} if clock is None else {"clock": clock})
    return await http.get(PROFILE, params=params, headers=ANALYST)


def rebuilt_equals_live(ports: Runtime) -> None:
    """The views, dropped and replayed from the log, hold what the live ones held."""
    ports.catch_up()
    live = ports.projection.dump()
    ports.projection.rebuild(ports.ledger)
    assert ports.projection.dump() == live


def shown(profile: dict[str, Any]) -> dict[str, str]:
    return {name: f["display"] for name, f in profile["fields"].items()}


def when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


async def test_an_imported_history_approved_today_reads_on_both_clocks(
    http: httpx.AsyncClient, ports: Runtime, clock: ManualClock
) -> None:
    report = await imported(http, JANUARY, MARCH)
    assert (report["sessions"], report["errors"]) == (2, [])
    await reviewed(ports)
    queue = await pending(http)
    assert shown({"fields": queue}) == {"budget": "40k", "supplier": "Globex"}
    clock.set(FIRST_APPROVAL)
    await approve(http, queue["budget"])
    clock.set(SECOND_APPROVAL)
    await approve(http, queue["supplier"])
    ports.catch_up()

    # The said clock: what the lead had told us by each date, by all we know now.
    nothing = await ok(await as_of(http, "2025-01-01T00:00:00+00:00", "said"))
    assert (nothing["fields"], nothing["version"], nothing["clock"]) == ({}, 0, "said")
    february = await ok(await as_of(http, "2025-02-01T00:00:00+00:00", "said"))
    assert shown(february) == {"budget": "40k"}
    budget = february["fields"]["budget"]
    assert when(budget["said_at"]) == datetime(2025, 1, 14, 9, 0, tzinfo=UTC)
    assert when(budget["known_at"]) == FIRST_APPROVAL
    april = await ok(await as_of(http, "2025-04-01T00:00:00+00:00", "said"))
    assert shown(april) == {"budget": "40k", "supplier": "Globex"}
    assert when(april["fields"]["supplier"]["said_at"]) == datetime(2025, 3, 3, 10, tzinfo=UTC)
    assert when(april["fields"]["supplier"]["known_at"]) == SECOND_APPROVAL
    assert (april["version"], april["cause"]) == (2, "said")
    assert when(april["at"]) == datetime(2025, 4, 1, tzinfo=UTC)
    # The default clock is the said one.
    assert await ok(await as_of(http, "2025-04-01T00:00:00+00:00")) == april

    # The known clock: what our profile said on each date.
    before = await as_of(http, "2025-04-01T00:00:00+00:00", "known")
    assert before.status_code == 404  # the ledger had not heard of the lead in April
    registered = await ok(await as_of(http, "2025-06-09T12:00:00+00:00", "known"))
    assert (registered["version"], registered["fields"], registered["clock"]) == (0, {}, "known")
    tenth = await ok(await as_of(http, "2025-06-10T12:00:00+00:00", "known"))
    assert (tenth["version"], shown(tenth)) == (1, {"budget": "40k"})
    assert when(tenth["known_at"]) == FIRST_APPROVAL
    assert when(tenth["said_at"]) == datetime(2025, 1, 14, 9, 0, tzinfo=UTC)
    eleventh = await ok(await as_of(http, "2025-06-11T12:00:00+00:00", "known"))
    assert (eleventh["version"], shown(eleventh)) == (2, {"budget": "40k", "supplier": "Globex"})

    # A diff between two dates, on either clock.
    said_diff = await ok(
        await http.get(
            f"{PROFILE}/diff",
            params={"from_as_of": "2025-02-01T00:00:00Z", "to_as_of": "2025-04-01T00:00:00Z"},
            headers=ANALYST,
        )
    )
    assert [(c["field"], c["before"], c["after"]["display"]) for c in said_diff["changes"]] == [
        ("supplier", None, "Globex")
    ]
    assert (said_diff["clock"], said_diff["from_version"]) == ("said", None)
    known_diff = await ok(
        await http.get(
            f"{PROFILE}/diff",
            params={
                "from_as_of": "2025-04-01T00:00:00Z",
                "to_as_of": "2025-06-10T12:00:00Z",
                "clock": "known",
            },
            headers=ANALYST,
        )
    )
    assert [c["field"] for c in known_diff["changes"]] == ["budget"]

    # Both clocks on every history entry and current field.
    history = await ok(await http.get(f"{PROFILE}/history", headers=ANALYST))
    assert [(h["field"], when(h["said_at"]), when(h["known_at"])) for h in history["entries"]] == [
        ("budget", datetime(2025, 1, 14, 9, tzinfo=UTC), FIRST_APPROVAL),
        ("supplier", datetime(2025, 3, 3, 10, tzinfo=UTC), SECOND_APPROVAL),
    ]
    current = await ok(await http.get(PROFILE, headers=ANALYST))
    assert when(current["fields"]["supplier"]["said_at"]) == datetime(2025, 3, 3, 10, tzinfo=UTC)
    assert (when(current["known_at"]), current["clock"]) == (SECOND_APPROVAL, None)
    rebuilt_equals_live(ports)


async def test_bad_dates_and_clocks_are_refused_naming_the_parameter(
    http: httpx.AsyncClient,
) -> None:
    await imported(http, JANUARY)
    cases: list[tuple[str, dict[str, str], str]] = [
        (PROFILE, {"as_of": "last spring"}, "as_of"),
        (PROFILE, {"as_of": "2025-02-01T00:00:00"}, "as_of"),
        (PROFILE, {"as_of": "2025-02-01T00:00:00Z", "clock": "wall"}, "clock"),
        (f"{PROFILE}/diff", {"from_as_of": "2025-02-01T00:00:00Z"}, "to_as_of"),
        (f"{PROFILE}/diff", {"to_as_of": "2025-02-01T00:00:00Z"}, "from_as_of"),
        (
            f"{PROFILE}/diff",
            {"from_as_of": "soon", "to_as_of": "2025-02-01T00:00:00Z"},
            "from_as_of",
        ),
        (
            f"{PROFILE}/diff",
            {"from_as_of": "2025-02-01T00:00:00", "to_as_of": "2025-02-01T00:00:00Z"},
            "from_as_of",
        ),
        (f"{PROFILE}/diff", {"from_version": "0"}, "to_version"),
        (
            f"{PROFILE}/diff",
            {
                "from_version": "0",
                "from_as_of": "2025-02-01T00:00:00Z",
                "to_as_of": "2025-03-01T00:00:00Z",
            },
            "from_version",
        ),
    ]
    for url, params, field in cases:
        response = await http.get(url, params=params, headers=ANALYST)
        assert response.status_code == 422, (params, response.text)
        assert response.json()["field"] == field, params


async def test_a_corrected_file_brings_a_skipped_session_back_in_its_place_in_time(
    http: httpx.AsyncClient, ports: Runtime, clock: ManualClock
) -> None:
    # The first file's January line is bad: only March goes in, and the reviewer approves it.
    first = await imported(http, JANUARY_BROKEN, MARCH)
    assert [(e["line"], e["field"]) for e in first["errors"]] == [(1, "messages[0].at")]
    assert first["sessions"] == 1
    await reviewed(ports)
    queue = await pending(http)
    assert shown({"fields": queue}) == {"supplier": "Globex"}
    clock.set(FIRST_APPROVAL)
    await approve(http, queue["supplier"])

    # The corrected file goes in: January is recorded after March, nothing else changes.
    clock.set(SECOND_APPROVAL)
    events_before = ports.ledger.recorder.max_notification_id()
    fixed = await imported(http, JANUARY, MARCH)
    assert (fixed["sessions"], fixed["unchanged"], fixed["errors"]) == (1, 1, [])
    await reviewed(ports)
    sessions = ports.ledger.subject("t1", LEAD_ID).sessions
    assert [(s.session_id, s.interaction_number) for s in sessions.values()] == [
        ("chat-0303", 1),
        ("chat-0114", 2),
    ]
    # January's budget is new and proposed; its supplier is older news than March's
    # approved Globex, so nothing proposes to put Initech back.
    queue = await pending(http)
    assert shown({"fields": queue}) == {"budget": "40k"}
    assert queue["budget"]["evidence"]["session_id"] == "chat-0114"
    await approve(http, queue["budget"])
    ports.catch_up()
    current = await ok(await http.get(PROFILE, headers=ANALYST))
    assert shown(current) == {"budget": "40k", "supplier": "Globex"}

    # On the said clock January's words take their place before March's.
    february = await ok(await as_of(http, "2025-02-01T00:00:00+00:00"))
    assert shown(february) == {"budget": "40k"}
    april = await ok(await as_of(http, "2025-04-01T00:00:00+00:00"))
    assert shown(april) == {"budget": "40k", "supplier": "Globex"}

    # The same corrected file again, and the review again: nothing is doubled.
    after = ports.ledger.recorder.max_notification_id()
    assert after is not None
    assert events_before is not None
    assert after > events_before
    again = await imported(http, JANUARY, MARCH)
    assert (again["sessions"], again["unchanged"], again["errors"]) == (0, 2, [])
    await reviewed(ports)
    assert ports.ledger.recorder.max_notification_id() == after
    assert await pending(http) == {}
    rebuilt_equals_live(ports)


async def test_a_skipped_session_never_overtakes_a_newer_pending_statement(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    await imported(http, JANUARY_BROKEN, MARCH)
    await reviewed(ports)
    globex = (await pending(http))["supplier"]
    await imported(http, JANUARY, MARCH)
    await reviewed(ports)
    queue = await pending(http)
    # March's Globex still waits, not superseded by January's older Initech.
    assert queue["supplier"] == globex
    assert queue["budget"]["display"] == "40k"


async def test_the_python_client_reads_both_clocks(
    http: httpx.AsyncClient, ports: Runtime, clock: ManualClock
) -> None:
    await imported(http, JANUARY, MARCH)
    await reviewed(ports)
    queue = await pending(http)
    clock.set(FIRST_APPROVAL)
    await approve(http, queue["supplier"])
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with AsyncFactledgerClient("http://api", token(Role.ANALYST), transport=transport) as c:
        april = datetime(2025, 4, 1, tzinfo=UTC)
        said = await c.profile(subject=LEAD_ID, as_of=april)
        assert (said.clock, list(said.fields)) == ("said", ["supplier"])
        assert said.fields["supplier"].known_at == FIRST_APPROVAL
        with pytest.raises(NotFoundError):
            await c.profile(subject=LEAD_ID, as_of=april, clock="known")
        diff = await c.diff_at(april, SECOND_APPROVAL, clock="known", subject=LEAD_ID)
        assert [d.field for d in diff.changes] == ["supplier"]
        assert (diff.from_version, diff.clock) == (None, "known")
