"""In a real headless Chromium: a request to forget said in conversation waits in the review
queue as "asks to forget this field"; a reviewer approves it on its page; afterwards the
forgotten words appear on no console page (subject page with its profile history, the change
pages, the transcript view, the memory page, the queue), and after erasure neither do the
subject's other words."""

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
    EraseSubject,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as Speaker
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

from .signing_in import sign_in
from .subject_pages import rendered, subject_pages

TENANT = "acme"
STATED = "Our budget is 47,500 euros this year."
ASKS = "Please delete our budget from your records."
KEPT = "We still like the onboarding plan."
MODEL = Actor(ActorKind.MODEL, "rule@1")
FORGOTTEN = ("47,500", "delete our budget")


@dataclass(frozen=True, slots=True)
class Served:
    base_url: str
    ports: Runtime
    lead: UUID
    stated: UUID
    request: UUID


def _seed(ports: Runtime) -> tuple[UUID, UUID, UUID]:
    ledger = ports.ledger
    lead = ledger.register_subject(RegisterSubject(TENANT, "lead", "crm-lead-77")).subject_id
    at = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)

    def said(session: str, *lines: tuple[Speaker, str]) -> None:
        transcript = tuple(Message(role, text, at) for role, text in lines)
        ledger.record_session(
            RecordSession(TENANT, lead, session, Channel.CHAT, at, at, transcript)
        )

    said("s1", (Speaker.AGENT, "What can you spend?"), (Speaker.SUBJECT, STATED))
    stated = ledger.propose_change(
        ProposeChange(
            TENANT,
            lead,
            "budget",
            Operation.SET,
            TextValue("47,500 euros"),
            Origin.STATED,
            MODEL,
            0,
            evidence=Evidence("s1", 1, STATED),
        )
    )
    (change_id,) = list(ledger.subject(TENANT, lead).changes)
    ledger.approve_change(ApproveChange(TENANT, lead, change_id, "rev-1"))
    assert stated.applied
    said("s2", (Speaker.AGENT, "Anything else?"), (Speaker.SUBJECT, ASKS), (Speaker.SUBJECT, KEPT))
    request = ProposeChange(
        TENANT,
        lead,
        "budget",
        Operation.FORGET,
        None,
        Origin.STATED,
        MODEL,
        1,
        evidence=Evidence("s2", 1, ASKS),
        rationale="request to forget budget",
    )
    ledger.propose_change(request)
    ports.catch_up()
    return lead, change_id, request.change_id


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    ports = build_ports(ManualClock(datetime(2026, 3, 2, 11, 0, tzinfo=UTC)))
    lead, stated, request = _seed(ports)
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    with serve(app) as base_url:
        yield Served(base_url, ports, lead, stated, request)


async def signed_in(context: BrowserContext, served: Served) -> Page:
    return await sign_in(context, Role.ADMIN, tenant=TENANT, at=served.base_url)


async def pages_say(page: Page, served: Served) -> str:
    """Every console page about the lead, as the browser rendered it."""
    changes = [served.stated, served.request]
    return await rendered(page, subject_pages(served.base_url, served.lead, changes))


async def test_the_request_waits_in_the_queue_and_approving_it_leaves_no_word_behind(
    context: BrowserContext, served: Served
) -> None:
    page = await signed_in(context, served)
    await page.goto(f"{served.base_url}/console/queue")
    row = page.locator("#queue-table tbody tr").filter(has_text="budget")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("asks to forget this field")
    await expect(row).to_contain_text(ASKS)
    before = await pages_say(page, served)
    assert all(word in before for word in FORGOTTEN)  # the canary sees them while they live

    await page.goto(f"{served.base_url}/console/queue")
    await row.get_by_role("link", name="Evidence and decision").click()
    await expect(page.locator(".forget-request")).to_contain_text("asks to forget")
    await page.get_by_role("button", name="Approve").click()
    await page.wait_for_load_state()
    served.ports.catch_up()

    after = await pages_say(page, served)
    for word in FORGOTTEN:
        assert word not in after
    assert KEPT in after  # the subject's other words stay
    assert "forgotten" in after

    served.ports.ledger.erase_subject(
        EraseSubject(TENANT, served.lead, Actor(ActorKind.STAFF, "admin-1"), "erasure requested")
    )
    served.ports.catch_up()
    erased = await pages_say(page, served)
    for word in (*FORGOTTEN, KEPT, "crm-lead-77"):
        assert word not in erased
