"""The subject page's look into the past, in headless Chromium: the profile as of a day on
either clock, picked in a form, and what changed between two days."""

from __future__ import annotations

from datetime import UTC, datetime

from playwright.async_api import BrowserContext, Page, expect
from support.browser import Console

from factledger.api.http.auth import Role
from factledger.application.ledger.commands import ApproveChange
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import TENANT

from .signing_in import sign_in

# The lead said both in the January chat (12 January); the supplier was approved on the
# 13th, the budget only on 20 February.
BUDGET_APPROVED = datetime(2026, 2, 20, 11, 0, tzinfo=UTC)


def approve_budget_later(console: Console) -> None:
    ledger = console.ports.ledger
    subject, changes = console.seeded.subject_id, console.seeded.changes
    ledger.approve_change(ApproveChange(TENANT, subject, changes["supplier_a"], "r-1"))
    clock = ledger.clock
    assert isinstance(clock, ManualClock)
    clock.set(BUDGET_APPROVED)
    ledger.approve_change(ApproveChange(TENANT, subject, changes["budget"], "r-1"))
    console.ports.catch_up()


async def show_as_of(page: Page, day: str, clock: str) -> None:
    form = page.locator("#as-of-form")
    await form.get_by_label("As of").fill(day)
    await form.get_by_label("Clock").select_option(clock)
    await form.get_by_role("button", name="Show").click()
    await page.wait_for_load_state()


async def compare_days(page: Page, older: str, newer: str, clock: str) -> None:
    form = page.locator("#dates-form")
    await form.get_by_label("From day").fill(older)
    await form.get_by_label("To day").fill(newer)
    await form.get_by_label("Clock").select_option(clock)
    await form.get_by_role("button", name="Compare days").click()
    await page.wait_for_load_state()


async def test_an_analyst_picks_days_on_both_clocks_and_compares_two_days(
    context: BrowserContext, console: Console
) -> None:
    page = await sign_in(context, Role.ANALYST)
    approve_budget_later(console)
    await page.goto(f"/console/subjects/{console.seeded.subject_id}")
    await expect(page.get_by_role("heading", name="Current profile")).to_be_visible()
    fields = page.locator("#profile-fields tbody tr")
    await expect(fields).to_have_count(2)

    # Said by the 12th: both, although the ledger recorded the budget only in February.
    await show_as_of(page, "2026-01-12", "said")
    heading = page.locator("#profile-h")
    await expect(heading).to_have_text("Profile as of 2026-01-12, as said")
    await expect(fields).to_have_count(2)
    budget = page.locator("#field-budget")
    await expect(budget.locator("td.said")).to_contain_text("2026-01-12")
    await expect(budget.locator("td.known")).to_contain_text("2026-02-20")
    await expect(page.locator("#as-of-form").get_by_label("As of")).to_have_value("2026-01-12")

    # What the profile held on the 13th: the supplier only; before the lead was known: nothing.
    await show_as_of(page, "2026-01-13", "known")
    await expect(heading).to_have_text("Profile as of 2026-01-13, as the ledger knew it")
    await expect(fields).to_have_count(1)
    await expect(page.locator("#field-supplier")).to_be_visible()
    await show_as_of(page, "2026-01-01", "known")
    await expect(page.locator("#not-known")).to_contain_text("did not know this subject yet")
    await show_as_of(page, "2026-01-01", "said")
    await expect(page.get_by_text("No confirmed fields by then.")).to_be_visible()
    await page.get_by_role("link", name="Back to the current profile").click()
    await expect(page.get_by_role("heading", name="Current profile")).to_be_visible()

    # Two days compared on the ledger's clock: the budget arrived between them.
    await compare_days(page, "2026-01-13", "2026-02-20", "known")
    diff = page.locator("#dates-diff tbody tr")
    await expect(page.locator("#dates-diff-h")).to_have_text(
        "Changes from 2026-01-13 to 2026-02-20, as the ledger knew it"
    )
    await expect(diff).to_have_count(1)
    await expect(diff.first.locator("th")).to_have_text("budget")
    await expect(diff.first.locator("td.before")).to_have_text("absent")
    # On the said clock, both were said on the 12th: nothing differs between the 13th and
    # 20 February, and everything between the 11th and the 12th.
    await compare_days(page, "2026-01-13", "2026-02-20", "said")
    await expect(page.get_by_text("No field differs.")).to_be_visible()
    await compare_days(page, "2026-01-11", "2026-01-12", "said")
    await expect(diff).to_have_count(2)


async def test_a_bad_day_is_refused_naming_the_parameter(
    context: BrowserContext, console: Console
) -> None:
    page = await sign_in(context, Role.ANALYST)
    subject = console.seeded.subject_id
    for query, name in (
        ("as_of=spring", "as_of"),
        ("as_of=2026-01-12&clock=wall", "clock"),
        ("from_date=2026-01-12", "to_date"),
    ):
        response = await page.goto(f"/console/subjects/{subject}?{query}")
        assert response is not None
        assert response.status == 422, query
        await expect(page.locator("main")).to_contain_text(name)
