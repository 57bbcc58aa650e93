"""The memory page in a real headless Chromium: an admin forgets a memory from it and the
page then lists it as forgotten, with when and why, never with its words; a rejected
inference is marked rejected, not latest."""

from __future__ import annotations

import re

from playwright.async_api import BrowserContext, expect
from support.api_harness import token
from support.browser import Console

from factledger.api.http.auth import Role
from factledger.application.ledger.commands import RejectChange
from factledger.application.memory.record_ids import namespace_for
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.story.script import TENANT

BUDGET_SAID = "budget is 40k a year"
INFERENCE = "price is an important factor for them"


async def sync(console: Console) -> None:
    ports = console.ports
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    report = await SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend)).run_once()
    assert report.dead == 0


async def memory_id_of(console: Console, text: str) -> str:
    assert console.ports.backend is not None
    ns = namespace_for(console.seeded.subject_id)
    (memory,) = [m for m in await console.ports.backend.list_memories(ns) if m.text == text]
    return memory.id


async def test_an_admin_forgets_a_memory_and_the_page_no_longer_shows_its_words(
    context: BrowserContext, console: Console
) -> None:
    # Given the January chat synced, and the model's inference rejected by a reviewer
    await sync(console)
    subject = console.seeded.subject_id
    reviewer = Actor(ActorKind.STAFF, "rev-1")
    rejection = RejectChange(
        TENANT, subject, console.seeded.changes["inference"], reviewer, "a guess"
    )
    console.ports.ledger.reject_change(rejection)
    budget, inference = (
        await memory_id_of(console, BUDGET_SAID),
        await memory_id_of(console, INFERENCE),
    )
    page = await context.new_page()
    await page.goto(f"/console/sign-in#token={token(Role.ADMIN, tenant=TENANT)}")
    async with page.expect_response(lambda r: r.request.method == "POST"):
        await page.get_by_role("button", name="Sign in").click()
    await page.goto(f"/console/subjects/{subject}/memory")

    # The rejected inference is shown as rejected, with its reason, not as the latest
    rejected = page.locator(f"#memory-{inference}")
    await expect(rejected.locator(".mark-rejected")).to_be_visible()
    await expect(rejected.locator(".mark-latest")).to_have_count(0)
    await expect(rejected).to_contain_text("a proposal of insights was rejected: a guess")

    # When the admin forgets the budget's memory from the page
    row = page.locator(f"#memory-{budget}")
    await expect(row).to_contain_text(BUDGET_SAID)
    await row.get_by_role("link", name=re.compile("^Forget")).click()
    await page.get_by_label("Reason (required)").fill("the lead asked")
    await page.get_by_role("button", name="Forget for good").click()
    await expect(page.get_by_role("status")).to_contain_text("Forgotten")

    # Then the memory page lists it as forgotten, dated, with the reason, without its words,
    # before the sync acts and after
    for synced in (False, True):
        if synced:
            await sync(console)
        await page.goto(f"/console/subjects/{subject}/memory")
        row = page.locator(f"#memory-{budget}")
        await expect(row.locator(".mark-forgotten")).to_be_visible()
        await expect(row).to_contain_text("[forgotten]")
        await expect(row).to_contain_text("forgotten: the lead asked")
        await expect(row.locator("time")).to_have_count(2)  # when forgotten, when said
        await expect(row).not_to_contain_text("40k")
        await expect(row.get_by_role("link", name=re.compile("^Forget"))).to_have_count(0)
