"""Import, then export (issue 30): a subject's past conversations imported with canary words,
then a field forget, a memory forget or an erasure, then every path that exports a subject's
history finds the forgotten words nowhere: `factledger replay` (every event as JSON lines) and
`factledger history` (the profile and its fields' history), each run as its own process, the
subject's event pages and the event stream from the start.

The product has no dedicated export command or route; these are the paths that hand a
subject's history out. On SQLite and on PostgreSQL + pgvector."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from support.forgotten_words import (
    ADMIN,
    BACKENDS,
    ERASE_REASON,
    KEPT,
    SERVICE,
    STATED,
    backend_settings,
    cli,
    client,
    imported,
    memory_drawn_from,
    ok,
    said_for,
    serving,
    stream,
)

from factledger.api.settings import Settings


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    return backend_settings(request, tmp_path)


async def state_budget(http: httpx.AsyncClient, sid: str, session: str) -> None:
    """The budget, stated in the imported session's first line, approved."""
    proposal = {
        "field": "budget",
        "value": {"type": "text", "value": STATED},
        "origin": "stated",
        "evidence": {"session_id": session, "message_index": 0, "quote": STATED},
        "based_on_version": 0,
    }
    url = f"/v1/subjects/{sid}/proposals"
    change = await ok(await http.post(url, json=proposal, headers=SERVICE), 201)
    approve = f"/v1/subjects/{sid}/proposals/{change['change_id']}/approve"
    await ok(await http.post(approve, json={}, headers=ADMIN))


@pytest.mark.parametrize("how", ["field", "memory", "erasure"])
async def test_no_export_after_a_forget_carries_the_imported_words(
    settings: Settings, how: str
) -> None:
    said, ref, canaries = said_for(how, "crm-x")
    session = f"past-{how}"
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await imported(http, ref, session, said)
        if how == "field":
            await state_budget(http, sid, session)
        events_url = f"/v1/subjects/{sid}/events?limit=500"
        count = len((await ok(await http.get(events_url, headers=ADMIN)))["events"])
        assert all(c in cli(settings, "replay") for c in canaries)  # there to leak before
        history = ("history", f"t1/lead/{ref}")
        if how == "field":
            assert STATED in cli(settings, *history)

        url = f"/v1/subjects/{sid}/forget"
        if how == "field":
            forget = {"field": "budget", "reason": "the subject asked"}
            await ok(await http.post(url, json=forget, headers=SERVICE))
        elif how == "memory":
            memory = await memory_drawn_from(rt, sid, "Island")
            forget = {"memory_id": memory, "reason": "the subject asked"}
            await ok(await http.post(url, json=forget, headers=SERVICE))
        else:
            body = {"reason": ERASE_REASON}
            await ok(await http.request("DELETE", f"/v1/subjects/{sid}", json=body, headers=ADMIN))
            canaries.append(ERASE_REASON)

        exports = {
            "replay": cli(settings, "replay"),
            "stream": json.dumps(await stream(api, count + 1)),
        }
        if how != "erasure":  # an erased subject's pages answer 410
            exports["pages"] = json.dumps(await ok(await http.get(events_url, headers=ADMIN)))
    if how != "erasure":
        exports["history"] = cli(settings, *history)
    for name, text in exports.items():
        for canary in canaries:
            assert canary not in text, (name, canary)
        if how != "erasure" and name != "history":  # history shows fields, not what was said
            assert KEPT in text, name  # the subject's other words stay
