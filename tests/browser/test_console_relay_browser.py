"""The console shows who relayed each of the subject's decisions, beside their words (profile,
field history, the change's page), and the product's review agreeing with a caller's change."""

from __future__ import annotations

from playwright.async_api import BrowserContext, expect
from support.browser import Console

from factledger.api.http.auth import Role
from factledger.application.ledger.commands import ProposeChange, RecordSession
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Message, MessageDecision, Verdict
from factledger.domain.transcript import Role as Speaker
from factledger.domain.values import TextValue
from factledger.testing.story.model import review_session
from factledger.testing.story.script import MARCH, MARCH_CALL, MODEL, REF, TENANT

from .signing_in import sign_in

CHANNEL = Actor(ActorKind.SYSTEM, "voice-platform")
AGENT = Actor(ActorKind.AGENT, "voice-bot")
SUPPLIER_B = "We now work with Supplier B."


def march_call(console: Console) -> None:
    """The March call as the channel relayed it: the agent asks about January's purchase
    intent and the lead's yes confirms it; the agent proposes the new supplier, and the
    product's own review of the call finds the same and agrees."""
    ledger, seeded = console.ports.ledger, console.seeded
    intent = seeded.changes["intent"]
    (asked, yes) = (MARCH_CALL.lines[2][1], MARCH_CALL.lines[3][1])
    transcript = (
        Message(Speaker.AGENT, MARCH_CALL.lines[0][1], MARCH),
        Message(Speaker.SUBJECT, MARCH_CALL.lines[1][1], MARCH, relayed_by=CHANNEL),
        Message(Speaker.AGENT, asked, MARCH, MessageDecision(Verdict.ASKS, intent)),
        Message(Speaker.SUBJECT, yes, MARCH, MessageDecision(Verdict.CONFIRMS, intent), CHANNEL),
    )
    session = MARCH_CALL.session_id
    ledger.record_session(
        RecordSession(
            TENANT, seeded.subject_id, session, MARCH_CALL.channel, MARCH, MARCH, transcript
        )
    )
    subject = ledger.subject(TENANT, seeded.subject_id)
    proposal = ProposeChange(
        TENANT,
        seeded.subject_id,
        "supplier",
        Operation.SET,
        TextValue("Supplier B"),
        Origin.STATED,
        AGENT,
        subject.profile_version,
        Evidence(session, 1, SUPPLIER_B),
    )
    ledger.propose_change(proposal)
    review_session(ledger, TENANT, seeded.subject_id, session)
    console.ports.catch_up()
    assert ledger.subject(TENANT, seeded.subject_id).agreed_by[proposal.change_id] == (MODEL,)


async def test_the_console_shows_who_relayed_each_confirmation_and_the_reviews_agreement(
    context: BrowserContext, console: Console
) -> None:
    march_call(console)
    seeded = console.seeded
    page = await sign_in(context, Role.REVIEWER)
    await page.goto(f"/console/subjects/{seeded.subject_id}")
    await expect(page.get_by_role("heading", name=f"lead {REF}")).to_be_visible()

    # The profile: the lead confirmed, the voice platform relayed their words.
    row = page.locator("#field-purchase_intent")
    await expect(row).to_contain_text(f"subject:{seeded.subject_id}")
    await expect(row.locator(".relay")).to_have_text("relayed by system:voice-platform")

    # The field history: the same, beside the words that confirmed it.
    history = page.locator("section[aria-labelledby=history-h] tr", has_text="purchase_intent")
    await expect(history.locator(".relay")).to_have_text("relayed by system:voice-platform")
    said = history.locator(".confirmed-in")
    await expect(said).to_contain_text(f"session {MARCH_CALL.session_id}, message 3")
    await expect(said.locator("q")).to_have_text(MARCH_CALL.lines[3][1])

    # The transcript: each of the lead's lines names its relay, the agent's lines none.
    await page.goto(f"/console/subjects/{seeded.subject_id}/sessions")
    lines = page.locator(f"#session-{MARCH_CALL.session_id} li.msg")
    await expect(lines.filter(has=page.locator(".relay"))).to_have_count(2)
    await expect(lines.nth(3).locator(".relay")).to_have_text("relayed by system:voice-platform")
    await expect(lines.nth(2).locator(".relay")).to_have_count(0)

    # The change's own page: decided by the lead, relayed by the channel.
    intent = seeded.changes["intent"]
    await page.goto(f"/console/subjects/{seeded.subject_id}/proposals/{intent}")
    decided = page.locator("dd.decided-by")
    await expect(decided).to_contain_text(f"subject:{seeded.subject_id}")
    await expect(decided.locator(".relay")).to_have_text("relayed by system:voice-platform")

    # The agent's proposal of the new supplier, which the product's review agreed with.
    await page.goto("/console/queue")
    await page.get_by_role("link", name="Evidence and decision for supplier").last.click()
    await expect(page.locator("dd.agreed-by")).to_contain_text(f"model:{MODEL.id}")
    await expect(page.get_by_text(f"agent:{AGENT.id}")).to_be_visible()
