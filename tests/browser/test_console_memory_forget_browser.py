"""In a real headless Chromium: a memory forgotten by id, through the API or from the console's
memory page, leaves its words on no console page (the queue, the subject page with its profile
history, the transcript view, the memory page, the change pages); the memory page lists it as
forgotten, dated, with the reason. The same pages show the words before the forget, so the
canary can fail."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect
from support.api_harness import TEST_AUTH, bearer, build_ports, token
from support.browser import serve

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import RateLimitSettings
from factledger.application.ledger.commands import (
    ApproveChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.memory.record_ids import namespace_for
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as Speaker
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

from .signing_in import sign_in
from .subject_pages import rendered, subject_pages

TENANT = "acme"
CANARY = "Brightwater"
SAID = f"Our team meets at the {CANARY} harbour office every Friday."
KEPT = "We still like the onboarding plan."
BUDGET = "Our budget is 47,500 euros this year."
MODEL = Actor(ActorKind.MODEL, "rule@1")
REASON = "the lead asked us to forget it"


@dataclass(frozen=True, slots=True)
class Served:
    base_url: str
    ports: Runtime
    lead: UUID
    changes: tuple[UUID, ...]


def _seed(ports: Runtime) -> tuple[UUID, tuple[UUID, ...]]:
    """A lead's chat: the canary line, a kept line and a budget line; an approved budget and
    a pending proposal quoting the canary line (so the queue and a change page hold it)."""
    ledger = ports.ledger
    lead = ledger.register_subject(RegisterSubject(TENANT, "lead", "crm-lead-88")).subject_id
    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    transcript = (
        Message(Speaker.AGENT, "Where does your team meet?", at),
        Message(Speaker.SUBJECT, SAID, at),
        Message(Speaker.SUBJECT, KEPT, at),
        Message(Speaker.SUBJECT, BUDGET, at),
    )
    ledger.record_session(RecordSession(TENANT, lead, "s1", Channel.CHAT, at, at, transcript))
    budget = ProposeChange(
        TENANT,
        lead,
        "budget",
        Operation.SET,
        TextValue("47,500 euros"),
        Origin.STATED,
        MODEL,
        0,
        evidence=Evidence("s1", 3, BUDGET),
    )
    ledger.propose_change(budget)
    ledger.approve_change(ApproveChange(TENANT, lead, budget.change_id, "rev-1"))
    place = ProposeChange(
        TENANT,
        lead,
        "meeting_place",
        Operation.SET,
        TextValue(f"{CANARY} harbour office"),
        Origin.STATED,
        MODEL,
        1,
        evidence=Evidence("s1", 1, SAID),
    )
    ledger.propose_change(place)
    ports.catch_up()
    return lead, (budget.change_id, place.change_id)


async def _sync(ports: Runtime) -> None:
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    worker = SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend))
    while (report := await worker.run_once()).fed or report.done:
        assert report.dead == 0


async def _memory_of(ports: Runtime, lead: UUID, words: str) -> str:
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(lead))
    drawn = [m.id for m in memories if words in m.text]
    assert drawn, [m.text for m in memories]
    return drawn[0]


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    ports = build_ports(ManualClock(datetime(2026, 3, 2, 11, 0, tzinfo=UTC)))
    lead, changes = _seed(ports)
    await _sync(ports)
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    with serve(app) as base_url:
        yield Served(base_url, ports, lead, changes)


async def _signed_in(context: BrowserContext, served: Served) -> Page:
    return await sign_in(context, Role.ADMIN, tenant=TENANT, at=served.base_url)


async def _pages_say(page: Page, served: Served) -> str:
    """Every console page about the lead, as the browser rendered it."""
    return await rendered(page, subject_pages(served.base_url, served.lead, served.changes))


async def _forget_through_the_api(served: Served, memory: str) -> None:
    service = bearer(token(Role.SERVICE, tenant=TENANT))
    async with httpx.AsyncClient(base_url=served.base_url, headers=service) as http:
        response = await http.post(
            f"/v1/subjects/{served.lead}/forget", json={"memory_id": memory, "reason": REASON}
        )
    assert response.status_code == 200, response.text
    forgotten = response.json()["forgotten_lines"]
    assert {"session_id": "s1", "message_index": 1} in forgotten


async def _forget_in_the_console(page: Page, served: Served, memory: str) -> None:
    await page.goto(f"{served.base_url}/console/subjects/{served.lead}/memory")
    row = page.locator(f"#memory-{memory}")
    await row.get_by_role("link", name=re.compile("^Forget")).click()
    await page.get_by_label("Reason (required)").fill(REASON)
    await page.get_by_role("button", name="Forget for good").click()
    await expect(page.get_by_role("status")).to_contain_text("Forgotten")


@pytest.mark.parametrize("through", ["api", "console"])
async def test_a_memory_forgotten_by_id_leaves_its_words_on_no_console_page(
    context: BrowserContext, served: Served, through: str
) -> None:
    page = await _signed_in(context, served)
    memory = await _memory_of(served.ports, served.lead, CANARY)
    before = await _pages_say(page, served)
    assert CANARY in before  # the canary sees the words while they live
    assert KEPT in before

    if through == "api":
        await _forget_through_the_api(served, memory)
    else:
        await _forget_in_the_console(page, served, memory)
    served.ports.catch_up()

    # Before the sync acts on the forget and after it
    for synced in (False, True):
        if synced:
            await _sync(served.ports)
            served.ports.catch_up()
        after = await _pages_say(page, served)
        assert CANARY not in after
        assert KEPT in after  # the lead's other words stay
        assert "47,500" in after  # and so does the budget
        await page.goto(f"{served.base_url}/console/subjects/{served.lead}/memory")
        row = page.locator(f"#memory-{memory}")
        await expect(row.locator(".mark-forgotten")).to_be_visible()
        await expect(row).to_contain_text(f"forgotten: {REASON}")
        await expect(row.locator("time").first).to_be_visible()
