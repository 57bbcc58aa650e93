"""Forgetting a field forgets the words that stated it, in every read path (issue 30), and
nothing of an erased person outlives the erasure (issue 34): canaries written through the HTTP
API, then read back through the subject's event pages, the event stream from the start and
from a mid-point (a real server: ASGI transports buffer whole responses), the CLI's replay
encoding, and the event store itself reopened by a new process's runtime.

On the embedded default (SQLite files) and on PostgreSQL + pgvector (fresh schemas)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from support.forgotten_words import (
    ADMIN,
    ANALYST,
    BACKENDS,
    ERASE_REASON,
    ERASED_REF,
    ERASED_WORDS,
    KEPT,
    SERVICE,
    STATED,
    backend_settings,
    client,
    memory_drawn_from,
    ok,
    replayed,
    serving,
    stored_sessions,
    stream,
    talk,
)

from factledger.api.settings import Settings
from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.record_ids import namespace_for, proposal_record_id


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    return backend_settings(request, tmp_path)


async def test_forgetting_a_field_forgets_the_words_that_stated_it_and_no_others(
    settings: Settings,
) -> None:
    said = [f"Our budget is {STATED} a year.", f"We buy from {KEPT} now."]
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await talk(http, "crm-words", "wa-words", said)
        events_url = f"/v1/subjects/{sid}/events?limit=500"
        before = await ok(await http.get(events_url, headers=ADMIN))
        assert STATED in json.dumps(before)  # the words were readable before the forget
        forget = {"field": "budget", "reason": "the subject asked"}
        url = f"/v1/subjects/{sid}/forget"
        done = await ok(await http.post(url, json=forget, headers=SERVICE))
        assert done["forgotten_lines"] == [{"session_id": "wa-words", "message_index": 0}]

        after = await ok(await http.get(events_url, headers=ADMIN))
        from_start = await stream(api, len(before["events"]) + 1)
        middle = from_start[len(from_start) // 2 - 1]["cursor"]
        rest = len(from_start) - len(from_start) // 2
        from_middle = await stream(api, rest, after=middle)
        resumed = await stream(api, rest, headers={"Last-Event-ID": middle})
        assert any(e["type"] == "session_recorded" for e in from_start)
        for read in (after, from_start, from_middle, resumed, replayed(rt)):
            text = json.dumps(read)
            assert STATED not in text
            assert KEPT in text  # the subject's other words stay
        assert "session_recorded" in {e["type"] for e in from_middle} | {
            e["type"] for e in from_start[: len(from_start) // 2]
        }
        recorded = stored_sessions(rt, sid)[0]
        assert [m["text"] for m in recorded.transcript] == [None, said[1]]
        assert recorded.transcript[0]["forgotten"] is True
        assert recorded.summary is None  # the summary restated the forgotten words

    # The event store itself, reopened by another runtime (a new process's keys, no cache).
    async with serving(settings) as (_, reopened):
        text = json.dumps([vars(e) for e in stored_sessions(reopened, sid)], default=str)
        assert STATED not in text
        assert KEPT in text


async def test_forgetting_a_memory_forgets_the_lines_it_was_drawn_from(
    settings: Settings,
) -> None:
    said = [f"We buy from {KEPT} now.", f"Our team meets on {STATED} Island."]
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await talk(http, "crm-memory", "wa-memory", said)
        before = await ok(await http.get(f"/v1/subjects/{sid}/events?limit=500", headers=ADMIN))
        assert STATED in json.dumps(before)
        drawn = await memory_drawn_from(rt, sid, "Island")
        forget = {"memory_id": drawn, "reason": "the subject asked"}
        url = f"/v1/subjects/{sid}/forget"
        done = await ok(await http.post(url, json=forget, headers=SERVICE))
        assert {"session_id": "wa-memory", "message_index": 1} in done["forgotten_lines"]
        after = await ok(await http.get(f"/v1/subjects/{sid}/events?limit=500", headers=ADMIN))
        assert STATED not in json.dumps(after)
        assert KEPT in json.dumps(after)


async def test_forgetting_a_memory_takes_the_pending_proposals_quoting_its_lines(
    settings: Settings,
) -> None:
    said = [f"We buy from {KEPT} now.", f"Our team meets on {STATED} Island."]
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await talk(http, "crm-pending", "wa-pending", said)
        proposal = {
            "field": "meeting_place",
            "value": {"type": "text", "value": f"{STATED} Island"},
            "origin": "stated",
            "evidence": {"session_id": "wa-pending", "message_index": 1, "quote": STATED},
        }
        url = f"/v1/subjects/{sid}/proposals"
        change = (await ok(await http.post(url, json=proposal, headers=SERVICE), 201))["change_id"]
        events_url = f"/v1/subjects/{sid}/events?limit=500"
        before = await ok(await http.get(events_url, headers=ADMIN))
        assert STATED in json.dumps(before)  # readable, quoted by the pending proposal too
        drawn = await memory_drawn_from(rt, sid, "Island")
        forget = {"memory_id": drawn, "reason": "the subject asked"}
        done = await ok(await http.post(f"/v1/subjects/{sid}/forget", json=forget, headers=SERVICE))
        assert done["rejected_changes"] == [change]
        assert done["redacted_changes"] == [change]

        shown = await ok(await http.get(f"{url}/{change}", headers=ADMIN))
        assert (shown["status"], shown["redacted"], shown["value"]) == ("forgotten", True, None)
        after = await ok(await http.get(events_url, headers=ADMIN))
        from_start = await stream(api, len(after["events"]))
        for read in (after, from_start, replayed(rt)):
            text = json.dumps(read)
            assert STATED not in text
            assert KEPT in text
        # The sync deletes the proposal's record from the memory backend.
        record = proposal_record_id(uuid.UUID(change))
        ns = namespace_for(uuid.UUID(sid))
        assert rt.backend is not None
        assert await rt.backend.get_record(ns, record)
        await memory_drawn_from(rt, sid, KEPT)  # runs the sync to the end
        with pytest.raises(MemoryNotFoundError):
            await rt.backend.get_record(ns, record)

    async with serving(settings) as (_, reopened):
        text = json.dumps(
            [vars(e) for e in reopened.ledger.events.get(uuid.UUID(sid))], default=str
        )
        assert STATED not in text
        assert KEPT in text


async def test_nothing_of_an_erased_person_outlives_the_erasure(settings: Settings) -> None:
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await talk(http, ERASED_REF, "wa-erased", [f"We pay {ERASED_WORDS} a month."])
        fingerprint = stored_sessions(rt, sid)[0].fingerprint
        count = len(
            (await ok(await http.get(f"/v1/subjects/{sid}/events", headers=ADMIN)))["events"]
        )
        before = await stream(api, count)
        assert ERASED_REF in json.dumps(before)  # the reference was readable before
        assert fingerprint not in json.dumps(before)  # never sent at all
        body = {"reason": ERASE_REASON}
        await ok(await http.request("DELETE", f"/v1/subjects/{sid}", json=body, headers=ADMIN))

        services = await stream(api, count + 1)
        analysts = await stream(api, count + 1, who=ANALYST)
        assert services[-1]["type"] == "erased"
        for read in (services, analysts, replayed(rt)):
            text = json.dumps(read)
            for canary in (ERASED_REF, ERASED_WORDS, ERASE_REASON, fingerprint):
                assert canary not in text, canary
        # A replayed command and the reference registered again: 410, nothing recorded.
        again = await http.post(
            "/v1/subjects", json={"kind": "lead", "external_ref": ERASED_REF}, headers=SERVICE
        )
        assert again.status_code == 410
        assert "`returning: true`" in again.json()["detail"]
        replay = await http.post(
            f"/v1/subjects/{sid}/forget",
            json={"field": "budget", "reason": "again"},
            headers={**SERVICE, "Idempotency-Key": "after-erasure-01"},
        )
        assert replay.status_code == 410
