"""The console's memory page shows only what may be read: a forgotten memory is listed as
forgotten, with when and why, never with its words (before and after the sync carries the
forget to the backend); a rejected inference is marked rejected, not latest."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client
from support.api_steps import sync
from support.console_seed import Seeded, csrf_of, seed_queue, sign_in

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import RateLimitSettings
from factledger.application.ledger.commands import RejectChange
from factledger.application.memory.record_ids import namespace_for
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import TENANT

BUDGET_SAID = "budget is 40k a year"
INFERENCE = "price is an important factor for them"


@pytest.fixture
async def seeded(ports: Runtime, clock: ManualClock) -> Seeded:
    """The story's January chat, its four proposals pending, synced to the backend."""
    found = seed_queue(ports, clock)
    await sync(ports)
    return found


@pytest.fixture
async def web(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    async with asgi_client(app) as client:
        yield client


def row_of(page: str, memory_id: str) -> str:
    """The table row of one memory."""
    found = re.search(rf'<tr id="memory-{memory_id}".*?</tr>', page, flags=re.DOTALL)
    assert found is not None, f"no row for {memory_id}"
    return found.group(0)


async def memory_id_of(ports: Runtime, seeded: Seeded, text: str) -> str:
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(seeded.subject_id))
    (memory,) = [m for m in memories if m.text == text]
    return memory.id


async def forget_in_console(web: httpx.AsyncClient, seeded: Seeded, **what: str) -> None:
    subject = seeded.subject_id
    query = "&".join(f"{k}={v}" for k, v in what.items())
    confirm = await web.get(f"/console/subjects/{subject}/forget?{query}")
    assert confirm.status_code == 200, confirm.text
    form = {"csrf": csrf_of(confirm.text), "nonce": "k" * 24, "reason": "the lead asked", **what}
    done = await web.post(f"/console/subjects/{subject}/forget", data=form)
    assert done.status_code == 303, done.text


async def test_a_memory_forgotten_by_id_shows_when_and_why_never_its_words(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    await sign_in(web, Role.ADMIN)
    memory_id = await memory_id_of(ports, seeded, BUDGET_SAID)
    url = f"/console/subjects/{seeded.subject_id}/memory"
    assert BUDGET_SAID in (await web.get(url)).text

    await forget_in_console(web, seeded, memory_id=memory_id)

    for synced in (False, True):  # before the sync acts, and after
        if synced:
            await sync(ports)
        page = await web.get(url)
        assert page.status_code == 200
        row = row_of(page.text, memory_id)
        assert "40k" not in row  # (the budget's proposal is still pending, readable)
        assert "mark-forgotten" in row
        assert "[forgotten]" in row
        assert "forgotten: the lead asked" in row
        assert re.search(r'<time datetime="2026-\d\d-\d\dT', row)
        assert ("the backend has not acted yet" in row) is not synced
        assert "mark-latest" not in row
        assert f"forget?memory_id={memory_id}" not in row  # nothing left to forget


async def test_a_forgotten_field_takes_its_memories_and_records_off_the_page(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    # Given the budget, only proposed, forgotten by an admin in the console
    await sign_in(web, Role.ADMIN)
    memory_id = await memory_id_of(ports, seeded, BUDGET_SAID)
    await forget_in_console(web, seeded, field="budget")

    url = f"/console/subjects/{seeded.subject_id}/memory"
    for synced in (False, True):
        if synced:
            await sync(ports)
        page = (await web.get(url)).text
        # Then neither the memory nor the proposal's record shows the budget's words
        assert "40k" not in page
        row = row_of(page, memory_id)
        assert "field budget forgotten: the lead asked" in row
        assert ("the backend has not acted yet" in row) is not synced
        budget_record = f"proposal {seeded.changes['budget']}"
        if synced:
            assert budget_record in page  # listed, and gone from the backend
        else:
            assert "withheld: it holds a forgotten field" in page


async def test_a_rejected_inference_is_shown_as_rejected_not_latest(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    reviewer = Actor(ActorKind.STAFF, "rev-1")
    change = seeded.changes["inference"]
    reason = "an inference, not said"
    ports.ledger.reject_change(RejectChange(TENANT, seeded.subject_id, change, reviewer, reason))
    await sign_in(web, Role.REVIEWER)
    memory_id = await memory_id_of(ports, seeded, INFERENCE)
    url = f"/console/subjects/{seeded.subject_id}/memory"
    for synced in (False, True):
        if synced:
            await sync(ports)
        row = row_of((await web.get(url)).text, memory_id)
        assert "mark-rejected" in row
        assert "mark-inferred" in row
        assert "mark-latest" not in row
        assert f"a proposal of insights was rejected: {reason}" in row
        assert ("the backend has not acted yet" in row) is not synced
        assert INFERENCE in row  # a reviewer may read what was rejected
