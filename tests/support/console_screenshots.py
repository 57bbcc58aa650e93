"""Screenshots of the console for the docs, taken with the browser tests' set-up.

    cd tests && ../.venv/bin/python -m support.console_screenshots ../docs

The queue is the story's lead after the January chat (the model's four proposals pending, the
intent's evidence opened);
the subject page is the lead after the whole story, synced to the in-memory backend,
comparing versions 1 and 3.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from playwright.async_api import Page, async_playwright
from support.api_harness import TEST_AUTH, build_ports, token
from support.browser import chromium, serve
from support.console_seed import seed_queue

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role
from factledger.application.ledger.commands import RecordSession
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import TENANT
from factledger.testing.story.steps import play_story

VIEWPORT = {"width": 1366, "height": 900}


async def _story(ports: Runtime, clock: ManualClock) -> str:
    async def record(session: RecordSession) -> None:
        ports.ledger.record_session(session)

    async def checkpoint(_: str) -> None:
        return None

    ids = await play_story(
        ports.ledger, clock, lambda _: None, record=record, checkpoint=checkpoint
    )
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    worker = SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend))
    while (await worker.run_once()).done:
        pass
    ports.catch_up()
    return str(ids.subject_id)


async def _signed_in(page: Page, base_url: str, role: Role) -> None:
    await page.goto(f"{base_url}/console/sign-in#token={token(role, tenant=TENANT)}")
    async with page.expect_response(lambda r: r.request.method == "POST"):
        await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_load_state()


async def main(out: Path) -> None:
    clock = ManualClock()
    queue_ports = build_ports(clock)
    seed_queue(queue_ports, clock)
    story_clock = ManualClock()
    story_ports = build_ports(story_clock)
    subject = await _story(story_ports, story_clock)
    async with async_playwright() as playwright, chromium(playwright) as browser:
        with serve(create_app(ports=queue_ports, auth=TEST_AUTH)) as base_url:
            page = await (await browser.new_context(viewport=VIEWPORT)).new_page()
            await _signed_in(page, base_url, Role.REVIEWER)
            intent = page.locator("table.queue tbody tr", has_text="purchase_intent")
            await intent.get_by_text("Evidence in context").click()
            await page.screenshot(path=out / "console-queue.png", full_page=True)
        with serve(create_app(ports=story_ports, auth=TEST_AUTH)) as base_url:
            page = await (await browser.new_context(viewport=VIEWPORT)).new_page()
            await _signed_in(page, base_url, Role.REVIEWER)
            await page.goto(f"{base_url}/console/subjects/{subject}?from_version=1&to_version=3")
            await page.screenshot(path=out / "console-subject.png", full_page=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
