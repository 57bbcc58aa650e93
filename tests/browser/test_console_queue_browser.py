"""The review queue at volume in a real headless Chromium: pages turned by cursor with exact
counts, identical proposals grouped and decided at once, select-all on a page and on a
filter (after a confirmation saying the exact count), and the keyboard shortcuts."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from playwright.async_api import BrowserContext, Dialog, Page, expect
from support.api_harness import TEST_AUTH, build_ports
from support.browser import serve
from support.queue_seed import INFERENCE, SeededQueue, seed_many

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import RateLimitSettings
from factledger.domain.events import ChangeConfirmed, ChangeRejected
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import TENANT

from .signing_in import sign_in

N = 60  # subjects: 60 supplier + 60 inference + 6 budget proposals
PENDING = 126


@dataclass(frozen=True, slots=True)
class Served:
    base_url: str
    ports: Runtime
    seeded: SeededQueue


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    clock = ManualClock()
    ports = build_ports(clock)
    seeded = seed_many(ports, clock, n=N, tenant=TENANT)
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    with serve(app) as base_url:
        yield Served(base_url, ports, seeded)


@pytest.fixture
async def queue_page(context: BrowserContext, served: Served) -> Page:
    page = await sign_in(context, Role.REVIEWER, at=served.base_url)
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible()
    return page


def decided(served: Served, kind: type[ChangeConfirmed | ChangeRejected]) -> list[object]:
    return [
        e
        for sid in served.seeded.subjects
        for e in served.ports.ledger.events.get(sid)
        if isinstance(e, kind)
    ]


async def row_ids(page: Page) -> list[str]:
    rows = page.locator("#queue-table tbody tr")
    return [str(await rows.nth(i).get_attribute("data-change")) for i in range(await rows.count())]


async def test_pages_turn_by_cursor_and_the_counts_are_exact(queue_page: Page) -> None:
    page = queue_page
    count = page.locator("#queue-count")
    await expect(count).to_contain_text(f"{PENDING} pending")
    rows = page.locator("#queue-table tbody tr")
    await expect(rows).to_have_count(50)
    first = await row_ids(page)

    await page.get_by_role("link", name="Next page →").click()
    await expect(rows).to_have_count(50)
    second = await row_ids(page)
    await page.get_by_role("link", name="Next page →").click()
    await expect(rows).to_have_count(PENDING - 100)
    third = await row_ids(page)
    await expect(page.get_by_role("link", name="Next page →")).to_have_count(0)
    assert len(set(first) | set(second) | set(third)) == PENDING

    await page.get_by_role("link", name="← Previous page").click()
    await expect(rows).to_have_count(50)
    assert await row_ids(page) == second

    # A filter narrows every pending proposal, and says how many match.
    await page.locator("select[name=field]").select_option("budget")
    await page.get_by_role("button", name="Filter").click()
    await expect(count).to_contain_text("6 pending match these filters")
    await page.locator("select[name=field]").select_option("")
    await page.get_by_label("Search field or subject").fill("crm-004")
    await page.get_by_role("button", name="Filter").click()
    await expect(count).to_contain_text("21 pending match")  # ten subjects, and one budget
    # The column says when it was said, and when it was recorded.
    await expect(rows.filter(has_text="supplier").first).to_contain_text("said ")


async def test_a_group_of_identical_proposals_is_approved_at_once(
    queue_page: Page, served: Served
) -> None:
    page = queue_page
    await page.get_by_role("link", name="Identical proposals, grouped").click()
    group = page.locator("#queue-table tbody tr").first
    await expect(group).to_contain_text(INFERENCE)
    await expect(group).to_contain_text(f"{N} across {N} subjects")
    await group.get_by_role("link", name=re.compile(f"Approve all {N}")).click()

    await expect(page.locator("#confirm-count")).to_contain_text(f"exactly {N} proposals")
    await page.get_by_label("Note (optional, recorded with each approval)").fill("agreed")
    await page.get_by_role("button", name=f"Approve {N} proposals").click()
    await expect(page.get_by_role("status")).to_contain_text("Approved")
    await expect(page.locator("#queue-count")).to_contain_text(f"{PENDING - N} pending")

    approvals = decided(served, ChangeConfirmed)
    assert len(approvals) == N
    assert {e.originator_id for e in approvals} == set(served.seeded.subjects)  # type: ignore[attr-defined]


async def test_select_all_on_a_page_and_on_a_filter(queue_page: Page, served: Served) -> None:
    page = queue_page
    await page.get_by_label("Select all on this page").check()
    boxes = page.locator("#queue-table tbody input[name=change]")
    await expect(boxes).to_have_count(50)
    for i in range(50):
        await expect(boxes.nth(i)).to_be_checked()
    await page.get_by_label("Note (approve, optional) or reason (reject, required)").fill(
        "not said by them"
    )
    await page.get_by_role("button", name="Reject selected").click()
    await expect(page.get_by_role("status")).to_contain_text("Rejected")
    await expect(page.locator("#queue-count")).to_contain_text(f"{PENDING - 50} pending")
    assert len(decided(served, ChangeRejected)) == 50

    # Every proposal a filter matches, after a confirmation with the exact count.
    await page.locator("select[name=origin]").select_option("stated")
    await page.get_by_role("button", name="Filter").click()
    stated = await page.locator("#queue-count strong").inner_text()
    await page.get_by_role("link", name=re.compile("Approve all .* that match")).click()
    await expect(page.locator("#confirm-count")).to_contain_text(f"exactly {stated} proposal")
    await expect(page.locator("ul.described")).to_contain_text("origin: stated")
    await page.get_by_role("button", name=re.compile("^Approve")).click()
    await expect(page.get_by_role("status")).to_contain_text("Approved")
    assert len(decided(served, ChangeConfirmed)) == int(stated)


async def test_the_keyboard_moves_selects_approves_and_rejects(
    queue_page: Page, served: Served
) -> None:
    page = queue_page
    shortcuts = page.locator("section.shortcuts")
    for said in ("next proposal", "previous proposal", "approve", "reject"):
        await expect(shortcuts).to_contain_text(said)
    rows = page.locator("#queue-table tbody tr")
    first, second = (await row_ids(page))[:2]

    await page.locator("body").press("j")
    await page.keyboard.press("j")
    await expect(rows.nth(1)).to_have_attribute("aria-current", "true")
    await page.keyboard.press("k")
    await expect(rows.nth(0)).to_have_attribute("aria-current", "true")
    await page.keyboard.press("x")
    await expect(rows.nth(0).locator("input[name=change]")).to_be_checked()

    await page.keyboard.press("a")  # approves the current row only, then the queue again
    await expect(page.get_by_role("status")).to_contain_text("Approved")
    await page.wait_for_load_state("load")  # the shortcuts' script runs at the page's end
    await expect(page.locator("#queue-count")).to_contain_text(f"{PENDING - 1} pending")
    (approval,) = decided(served, ChangeConfirmed)
    assert str(approval.change_id) == first.split("/")[1]  # type: ignore[attr-defined]

    async def reason(dialog: Dialog) -> None:
        await dialog.accept("nobody said it")

    page.once("dialog", reason)
    await page.keyboard.press("j")
    await expect(rows.nth(0)).to_have_attribute("aria-current", "true")
    await page.keyboard.press("r")
    await expect(page.get_by_role("status")).to_contain_text("Rejected")
    await page.wait_for_load_state("load")
    (rejection,) = decided(served, ChangeRejected)
    assert str(rejection.change_id) == second.split("/")[1]  # type: ignore[attr-defined]
    assert rejection.reason == "nobody said it"  # type: ignore[attr-defined]

    await page.keyboard.press("n")
    await expect(page.get_by_role("link", name="← Previous page")).to_be_visible()
    assert UUID(first.split("/")[0]) in served.seeded.subjects
