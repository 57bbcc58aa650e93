"""Signing in to the console in the browser, as a person would: a platform token pasted into
the sign-in form."""

from __future__ import annotations

from playwright.async_api import BrowserContext, Page
from support.api_harness import token

from factledger.api.http.auth import Role
from factledger.testing.story.script import TENANT


async def sign_in(
    context: BrowserContext, role: Role, *, tenant: str = TENANT, at: str = ""
) -> Page:
    """A new page of `context` signed in with `role`'s token, showing what the console answers
    (`at`: the console's origin when it is not the context's base URL)."""
    page = await context.new_page()
    await page.goto(f"{at}/console/sign-in")
    extra = {"kind": "lead", "ref": "lead-0042"} if role is Role.AGENT else {}
    await page.get_by_label("Platform token").fill(token(role, tenant=tenant, **extra))
    await submit_sign_in(page)
    return page


async def submit_sign_in(page: Page) -> None:
    """Clicks "Sign in" and waits for the page the console answers with."""
    async with page.expect_response(lambda r: r.request.method == "POST"):
        await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_load_state()
