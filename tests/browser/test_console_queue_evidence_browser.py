"""The queue's evidence in context, loaded when the reviewer opens it (ADR 0091), in a real
headless Chromium: nothing is fetched before an item is opened, opening it shows the quote
among its messages (by click and by the `e` shortcut), and words forgotten since are never
shown, even by a page loaded before the forget."""

from __future__ import annotations

import re
from dataclasses import dataclass

from playwright.async_api import BrowserContext, Locator, Page, Request, expect
from support.browser import Console

from factledger.api.http.auth import Role
from factledger.application.ledger.commands import ApproveChange, ForgetField
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.story.script import INTENT_QUOTE, TENANT

from .signing_in import sign_in

CONTEXT = re.compile(r"/console/subjects/[^/]+/proposals/[^/]+/context$")
FORGOTTEN = "Supplier A"  # said on the line before the intent's quote


@dataclass(frozen=True, slots=True)
class _Queue:
    page: Page
    fetched: list[str]  # the evidence fragments the page has asked for, in order

    @property
    def intent(self) -> Locator:
        """The row of the change that quotes the intent."""
        return self.page.locator("#queue-table tbody tr").filter(has_text="purchase_intent")


async def _queue(context: BrowserContext) -> _Queue:
    """A reviewer signed in, on the queue page; every evidence fragment fetched is noted
    from the first request on."""
    fetched: list[str] = []

    def seen(request: Request) -> None:
        if CONTEXT.search(request.url):
            fetched.append(request.url)

    context.on("request", seen)
    page = await sign_in(context, Role.REVIEWER)
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible()
    return _Queue(page, fetched)


async def test_the_evidence_is_fetched_on_opening_and_shows_the_words_around_the_quote(
    context: BrowserContext, console: Console
) -> None:
    queue = await _queue(context)
    page, fetched, intent = queue.page, queue.fetched, queue.intent
    # The page carries the quote, not the messages around it, and fetched none of them
    await expect(intent.locator("q")).to_have_text(INTENT_QUOTE)
    await expect(page.locator("ol.transcript")).to_have_count(0)
    assert fetched == []

    await intent.get_by_text("Evidence in context").click()

    await expect(intent.locator("li.evidence mark")).to_have_text(INTENT_QUOTE)
    await expect(intent.locator("li.msg")).to_have_count(3)  # two before, none after
    await expect(intent.locator("li.msg").nth(1)).to_contain_text("consider switching to us")
    await expect(intent.locator("ol.transcript")).to_have_attribute(
        "aria-label", "Messages around the quote"
    )
    assert len(fetched) == 1
    assert str(console.seeded.changes["intent"]) in fetched[0]

    # Closed and opened again: already there, not fetched twice
    summary = intent.get_by_text("Evidence in context")
    await summary.click()
    await summary.click()
    await expect(intent.locator("li.evidence mark")).to_be_visible()
    assert len(fetched) == 1


async def test_the_e_key_opens_and_closes_the_current_proposals_evidence(
    context: BrowserContext, console: Console
) -> None:
    queue = await _queue(context)
    page, fetched = queue.page, queue.fetched
    rows = page.locator("#queue-table tbody tr")
    quoting = [
        i
        for i in range(await rows.count())
        if await rows.nth(i).locator("details.in-context").count()
    ]
    assert quoting, "no proposal quotes its evidence"
    for _ in range(quoting[0] + 1):
        await page.keyboard.press("j")
    current = rows.nth(quoting[0])
    await expect(current).to_have_attribute("aria-current", "true")

    await page.keyboard.press("e")
    await expect(current.locator("details.in-context")).to_have_attribute("open", "")
    await expect(current.locator("li.evidence mark")).to_be_visible()
    await expect(current).to_be_focused()  # the keyboard stays on the row
    assert len(fetched) == 1

    await page.keyboard.press("e")
    await expect(current.locator("li.evidence mark")).to_be_hidden()
    await page.keyboard.press("j")  # and the other shortcuts still work
    await expect(rows.nth(quoting[0] + 1)).to_have_attribute("aria-current", "true")


async def test_words_forgotten_after_the_page_was_loaded_are_never_shown(
    context: BrowserContext, console: Console
) -> None:
    queue = await _queue(context)
    page, intent = queue.page, queue.intent

    # When the lead's supplier is approved and forgotten while the page is open
    ledger, sid = console.ports.ledger, console.seeded.subject_id
    ledger.approve_change(ApproveChange(TENANT, sid, console.seeded.changes["supplier_a"], "rev"))
    ledger.forget_field(
        ForgetField(TENANT, sid, "supplier", Actor(ActorKind.SUBJECT, "lead"), "asked")
    )
    console.ports.catch_up()

    # Then the evidence opened afterwards is read as it is now: the quote, not those words
    await intent.get_by_text("Evidence in context").click()
    await expect(intent.locator("li.evidence mark")).to_have_text(INTENT_QUOTE)
    assert FORGOTTEN not in await intent.locator("details.in-context").inner_text()

    # And a fresh page with every item's evidence opened holds them nowhere
    await page.reload()
    opened = page.locator("details.in-context")
    for i in range(await opened.count()):  # one at a time: a load moves the rows below it
        await opened.nth(i).locator("summary").click()
        await expect(opened.nth(i)).to_have_attribute("data-loaded", "yes")
    assert FORGOTTEN not in await page.content()


async def test_an_ended_session_leaves_a_note_not_the_sign_in_page(
    context: BrowserContext, console: Console
) -> None:
    queue = await _queue(context)
    fetched, intent = queue.fetched, queue.intent
    await context.clear_cookies()

    await intent.get_by_text("Evidence in context").click()

    await expect(intent.locator("details.in-context")).to_contain_text("could not be loaded")
    await expect(intent.get_by_label("Platform token")).to_have_count(0)
    assert len(fetched) == 1
