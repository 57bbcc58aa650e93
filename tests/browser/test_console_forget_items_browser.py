"""In a real headless Chromium (ADR 0160): a request to forget one item of a list waits in the
review queue as "asks to forget: Quillotron", its page says what approving it keeps, a
reviewer approves it there, and afterwards the item appears on no console page while the
items it kept stay on the subject's page; an admin then forgets one more item on the forget
page by ticking it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

import pytest
from playwright.async_api import BrowserContext, Page, expect
from support.api_harness import TEST_AUTH, build_ports
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
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as Speaker
from factledger.domain.values import ListValue
from factledger.testing.manual_clock import ManualClock

from .signing_in import sign_in
from .subject_pages import rendered, subject_pages

TENANT = "acme"
NAMED = "We mostly lose deals to Acme, Quillotron and Zorbex."
ASKS = "Please delete what I told you about Quillotron."
MODEL = Actor(ActorKind.MODEL, "rule@1")


@dataclass(frozen=True, slots=True)
class Served:
    base_url: str
    ports: Runtime
    lead: UUID
    request: UUID


def _seed(ports: Runtime) -> tuple[UUID, UUID]:
    ledger = ports.ledger
    lead = ledger.register_subject(RegisterSubject(TENANT, "lead", "crm-lead-88")).subject_id
    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)

    def said(session: str, text: str) -> None:
        lines = (Message(Speaker.AGENT, "Anything else?", at), Message(Speaker.SUBJECT, text, at))
        ledger.record_session(RecordSession(TENANT, lead, session, Channel.CHAT, at, at, lines))

    def proposed(operation: Operation, names: tuple[str, ...], quote: Evidence) -> UUID:
        version = ledger.subject(TENANT, lead).profile_version
        cmd = ProposeChange(
            TENANT, lead, "competitors", operation, ListValue(names), Origin.STATED, MODEL,
            version, evidence=quote,
        )  # fmt: skip
        ledger.propose_change(cmd)
        return cmd.change_id

    said("s1", NAMED)
    listed = proposed(Operation.SET, ("Acme", "Quillotron", "Zorbex"), Evidence("s1", 1, NAMED))
    ledger.approve_change(ApproveChange(TENANT, lead, listed, "rev-1"))
    said("s2", ASKS)
    request = proposed(Operation.FORGET, ("Quillotron",), Evidence("s2", 1, ASKS))
    ports.catch_up()
    return lead, request


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    ports = build_ports(ManualClock(datetime(2026, 3, 2, 11, 0, tzinfo=UTC)))
    lead, request = _seed(ports)
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    with serve(app) as base_url:
        yield Served(base_url, ports, lead, request)


async def pages_say(page: Page, served: Served) -> str:
    return await rendered(page, subject_pages(served.base_url, served.lead, [served.request]))


async def test_approving_forgets_the_item_everywhere_and_keeps_the_others(
    context: BrowserContext, served: Served
) -> None:
    page = await sign_in(context, Role.ADMIN, tenant=TENANT, at=served.base_url)
    await page.goto(f"{served.base_url}/console/queue")
    row = page.locator("#queue-table tbody tr").filter(has_text="competitors")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("asks to forget: Quillotron")
    assert "Quillotron" in await pages_say(page, served)  # the canary sees it while it lives

    await page.goto(f"{served.base_url}/console/subjects/{served.lead}/proposals/{served.request}")
    await expect(page.locator(".kept-items")).to_contain_text("Acme, Zorbex")
    await page.get_by_role("button", name="Approve").click()
    await page.wait_for_load_state()
    served.ports.catch_up()

    after = await pages_say(page, served)
    assert "Quillotron" not in after
    await page.goto(f"{served.base_url}/console/subjects/{served.lead}")
    await expect(page.locator("body")).to_contain_text("Acme, Zorbex")

    # An admin forgets one more item directly, ticking it on the forget page.
    await page.goto(f"{served.base_url}/console/subjects/{served.lead}/forget?field=competitors")
    await page.get_by_label("Zorbex").check()
    await page.get_by_label("Reason (required)").fill("asked on the phone")
    await page.get_by_role("button", name="Forget for good").click()
    await page.wait_for_load_state()
    served.ports.catch_up()
    fields = served.ports.ledger.subject(TENANT, served.lead).fields
    assert fields["competitors"].value == ListValue(("Acme",))
