"""The reviewer's console driven in a real headless Chromium, as a person would use it."""

from __future__ import annotations

import re

import structlog
from playwright.async_api import BrowserContext, expect
from support.api_harness import token
from support.browser import Console

from factledger.api.http.auth import Role
from factledger.application.ledger.commands import ApproveChange
from factledger.domain.events import ChangeConfirmed, ChangeRejected, FactForgotten
from factledger.testing.story.script import INTENT_QUOTE, TENANT

from .signing_in import sign_in, submit_sign_in

OTHER_TENANT = "globex"


async def test_a_reviewer_opens_the_evidence_approves_with_a_note_and_rejects_an_inference(
    context: BrowserContext, console: Console
) -> None:
    page = await sign_in(context, Role.REVIEWER)
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible()
    rows = page.locator("table.queue tbody tr")
    await expect(rows).to_have_count(4)
    await expect(page.locator("tr.inferred .origin-inferred")).to_have_text("INFERRED")

    # The evidence, opened in the queue: the quoted sentence among the session's messages.
    intent = rows.filter(has_text="purchase_intent")
    await expect(intent.locator("mark")).to_be_hidden()
    await intent.get_by_text("Evidence in context").click()
    await expect(intent.locator("li.evidence mark")).to_have_text(INTENT_QUOTE)
    await expect(intent.locator("li.msg")).to_have_count(3)  # two before, none after

    # And on the proposal's own page.
    await page.get_by_role(
        "link", name=re.compile("Evidence and decision for purchase_intent")
    ).click()
    await expect(page.locator("li.evidence mark")).to_have_text(INTENT_QUOTE)
    await expect(page.locator("ol.transcript li")).to_have_count(4)
    await page.get_by_role("link", name="← Review queue").click()

    # Approve the supplier with a note, from the keyboard: type the note, press Enter.
    await page.get_by_role("link", name=re.compile("Evidence and decision for supplier")).click()
    note = page.get_by_label("Note (optional, recorded with the approval)")
    await note.focus()
    await page.keyboard.type("checked with the lead")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("status")).to_contain_text("Approved")

    # Reject the model's inference: a reason is required.
    await page.get_by_role("link", name=re.compile("Evidence and decision for insights")).click()
    await expect(page.get_by_text("this is a model's inference")).to_be_visible()
    await page.get_by_label("Reason (required to reject)").fill("a guess, not something they said")
    await page.get_by_role("button", name="Reject").click()
    await expect(page.get_by_role("status")).to_contain_text("Rejected")
    await expect(rows).to_have_count(2)

    events = list(console.ports.ledger.events.get(console.seeded.subject_id))
    approved = [e for e in events if isinstance(e, ChangeConfirmed)]
    rejected = [e for e in events if isinstance(e, ChangeRejected)]
    assert [(e.confirmed_by["id"], e.note) for e in approved] == [
        ("reviewer-1", "checked with the lead")
    ]
    assert [e.rejected_by["id"] for e in rejected] == ["reviewer-1"]


async def test_the_page_is_keyboard_navigable_from_its_first_tab(
    context: BrowserContext, console: Console
) -> None:
    page = await sign_in(context, Role.REVIEWER)
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible()
    await page.keyboard.press("Tab")
    focused = await page.evaluate("document.activeElement.textContent.trim()")
    assert focused == "Skip to content"
    await page.keyboard.press("Enter")
    assert await page.evaluate("document.activeElement.id") == "main"
    # One click from a queue item to its subject.
    await page.get_by_role("link", name="lead lead-0042").first.click()
    await expect(page.get_by_role("heading", name="lead lead-0042")).to_be_visible()


async def test_an_admin_forgets_a_field_compares_versions_and_retries_a_dead_letter(
    context: BrowserContext, console: Console
) -> None:
    ledger, subject = console.ports.ledger, console.seeded.subject_id
    for name in ("supplier_a", "intent"):
        ledger.approve_change(ApproveChange(TENANT, subject, console.seeded.changes[name], "r-2"))
    # Signed in from a dev sign-in link: the token travels in the fragment.
    page = await context.new_page()
    await page.goto(f"/console/sign-in#token={token(Role.ADMIN, tenant=TENANT)}")
    assert "#" not in page.url  # the page dropped the token from the address bar
    await submit_sign_in(page)
    await page.goto(f"/console/subjects/{subject}")

    await page.locator("#field-supplier").get_by_role("link", name=re.compile("^Forget")).click()
    await expect(page.get_by_role("heading", name=re.compile("Forget the field"))).to_be_visible()
    await page.get_by_label("Reason (required)").fill("the lead asked")
    await page.get_by_role("button", name="Forget for good").click()
    await expect(page.get_by_role("status")).to_contain_text("Forgotten")
    await expect(page.locator("#field-supplier")).to_have_count(0)

    await page.get_by_label("From version").select_option("1")
    await page.get_by_label("To version").select_option("3")
    await page.get_by_role("button", name="Compare versions").click()
    # Forgetting redacts the field in every version, the old ones included.
    diff = page.locator("table.diff")
    supplier = diff.locator("tr", has_text="supplier")
    await expect(supplier.locator("td.before")).to_have_text("[forgotten]")
    await expect(supplier.locator("td.after")).to_have_text("absent")
    await expect(diff.locator("tr", has_text="purchase_intent")).to_be_visible()

    await page.get_by_role("link", name="Operations").click()
    await expect(page.get_by_text("MemoryUnavailableError")).to_be_visible()
    await page.get_by_role("button", name=f"Retry item {console.dead_letter}").click()
    await expect(page.get_by_role("status")).to_contain_text("Retried")
    await expect(page.get_by_text("None: every item reached the memory backend.")).to_be_visible()
    forgotten = [e for e in ledger.events.get(subject) if isinstance(e, FactForgotten)]
    assert [(e.field, e.requested_by["id"]) for e in forgotten] == [("supplier", "admin-1")]


async def test_an_agent_token_is_refused(context: BrowserContext, console: Console) -> None:
    page = await sign_in(context, Role.AGENT)
    await expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    await expect(page.get_by_role("alert")).to_contain_text("role agent may not use the console")
    await page.goto("/console/queue")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


async def test_a_second_tenants_subject_is_a_404(context: BrowserContext, console: Console) -> None:
    page = await sign_in(context, Role.REVIEWER, tenant=OTHER_TENANT)
    answer = await page.goto(f"/console/subjects/{console.seeded.subject_id}")
    assert answer is not None
    assert answer.status == 404
    await expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    await expect(page.get_by_text("lead-0042")).to_have_count(0)


async def test_a_form_without_its_csrf_token_is_refused(
    context: BrowserContext, console: Console
) -> None:
    page = await sign_in(context, Role.REVIEWER)
    await page.get_by_role("link", name=re.compile("Evidence and decision for budget")).click()
    approve = page.locator("form[action$='/approve']")
    await approve.locator("input[name=csrf]").evaluate("input => input.remove()")
    async with page.expect_response(re.compile("/approve$")) as posted:
        await approve.get_by_role("button", name="Approve").click()
    assert (await posted.value).status == 403
    await expect(page.get_by_role("alert")).to_contain_text("csrf")
    events = console.ports.ledger.events.get(console.seeded.subject_id)
    assert not any(isinstance(e, ChangeConfirmed) for e in events)


async def test_a_page_that_fails_shows_the_error_page_with_its_request_id(
    context: BrowserContext, console: Console
) -> None:
    page = await sign_in(context, Role.REVIEWER)
    await expect(page.get_by_role("heading", name="Review queue")).to_be_visible()

    def fail(*_: object, **__: object) -> object:
        raise RuntimeError("a failing read")

    assert console.ports.queue is not None
    console.ports.queue.choices = fail  # type: ignore[method-assign]
    # Captured, not rendered: the default console renderer pretty-prints the traceback with
    # its locals, which on a loaded machine takes longer than the page may.
    with structlog.testing.capture_logs() as logs:
        response = await page.goto("/console/queue")

    assert [e["error_type"] for e in logs if e["event"] == "api.unexpected_error"] == [
        "RuntimeError"
    ]
    assert response is not None
    assert response.status == 500
    await expect(page.get_by_role("heading", name="Something went wrong")).to_be_visible()
    await expect(page.locator("main")).to_contain_text(response.headers["x-request-id"])
    await expect(page.get_by_role("link", name="Sign in")).to_be_visible()
