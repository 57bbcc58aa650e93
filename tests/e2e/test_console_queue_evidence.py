"""The queue's evidence in context, loaded when an item is opened (ADR 0091): the page quotes
each change and carries no message around it; each change's fragment shows its quote among its
messages, never words forgotten since, under the console's session, role, tenant, cross-site
and header rules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client
from support.console_seed import OTHER_TENANT, Seeded, seed_queue, sign_in

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role as TokenRole
from factledger.api.settings import RateLimitSettings
from factledger.application.ledger.commands import (
    ApproveChange,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import TENANT


@pytest.fixture
def seeded(ports: Runtime, clock: ManualClock) -> Seeded:
    return seed_queue(ports, clock)


@pytest.fixture
async def web(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    async with asgi_client(app) as client:
        yield client


def _quoting_subject(ports: Runtime, clock: ManualClock, n: int) -> tuple[UUID, UUID]:
    """A subject whose proposal quotes the middle of three lines: (subject id, change id)."""
    ledger = ports.ledger
    sid = ledger.register_subject(RegisterSubject(TENANT, "lead", f"lead-q{n}")).subject_id
    said = ("Who supplies you?", f"Quokka{n} Packaging, since spring.", "Thanks.")
    transcript = tuple(
        Message(role, text)
        for role, text in zip((Role.AGENT, Role.SUBJECT, Role.AGENT), said, strict=True)
    )
    at = clock.now()
    ledger.record_session(RecordSession(TENANT, sid, "call-1", Channel.CHAT, at, at, transcript))
    command = ProposeChange(
        TENANT,
        sid,
        "supplier",
        Operation.SET,
        TextValue(f"Quokka{n} Packaging"),
        Origin.STATED,
        Actor(ActorKind.MODEL, "m"),
        ledger.subject(TENANT, sid).profile_version,
        evidence=Evidence("call-1", 1, f"Quokka{n} Packaging"),
    )
    ledger.propose_change(command)
    return sid, command.change_id


def _context_url(subject_id: UUID, change_id: UUID) -> str:
    return f"/console/subjects/{subject_id}/proposals/{change_id}/context"


async def test_the_page_quotes_and_each_fragment_shows_the_words_around_it(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded, clock: ManualClock
) -> None:
    # Given the story's lead (its supplier quoted from its January chat) and three more
    # subjects quoting a line of their own, between two others
    quoting = [_quoting_subject(ports, clock, n) for n in range(3)]
    ports.catch_up()
    await sign_in(web)

    # Then the queue page quotes each change, and holds none of the lines around the quotes
    page = (await web.get("/console/queue")).text
    for words in ("Supplier A", "Quokka0 Packaging", "Quokka1 Packaging", "Quokka2 Packaging"):
        assert words in page
    assert "Who supplies you?" not in page
    assert 'class="transcript"' not in page
    # the lead's supplier, budget and intent, and the three others'
    assert page.count('<details class="in-context">') == 3 + 3

    # And each change's fragment shows its quote marked among the lines around it
    for n, (sid, change) in enumerate(quoting):
        answer = await web.get(_context_url(sid, change))
        assert answer.status_code == 200
        assert "Who supplies you?" in answer.text
        assert f"<mark>Quokka{n} Packaging</mark>, since spring." in answer.text
        assert "<html" not in answer.text  # a fragment, not a page
        assert answer.headers["cache-control"] == "no-store"
        assert "script-src 'self'" in answer.headers["content-security-policy"]


async def test_a_fragment_never_shows_words_forgotten_since(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded, clock: ManualClock
) -> None:
    other, other_change = _quoting_subject(ports, clock, 0)
    ports.catch_up()
    await sign_in(web)
    sid, intent = seeded.subject_id, seeded.changes["intent"]
    assert "Supplier A" in (await web.get(_context_url(sid, intent))).text

    # When the lead's supplier is approved and then forgotten (its line's key goes)
    ledger = ports.ledger
    ledger.approve_change(ApproveChange(TENANT, sid, seeded.changes["supplier_a"], "rev"))
    ledger.forget_field(
        ForgetField(TENANT, sid, "supplier", Actor(ActorKind.SUBJECT, "lead"), "asked")
    )
    ports.catch_up()

    # Then neither the page nor the intent's fragment shows that line's words again; the
    # intent's own quote and the other subject's words stay
    assert "Supplier A" not in (await web.get("/console/queue")).text
    fragment = (await web.get(_context_url(sid, intent))).text
    assert "Supplier A" not in fragment
    assert "<mark>Maybe next quarter, if the pricing works.</mark>" in fragment
    kept = (await web.get(_context_url(other, other_change))).text
    assert "Quokka0 Packaging" in kept


async def test_a_fragment_follows_the_consoles_session_role_tenant_and_site_rules(
    web: httpx.AsyncClient, seeded: Seeded
) -> None:
    url = _context_url(seeded.subject_id, seeded.changes["intent"])
    # No session: the sign-in page, never the words
    answer = await web.get(url)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/console/sign-in"

    await sign_in(web, TokenRole.ANALYST)  # analysts do not review
    assert (await web.get(url)).status_code == 403

    web.cookies.clear()
    await sign_in(web, tenant=OTHER_TENANT)  # another tenant's subject is no subject
    answer = await web.get(url)
    assert answer.status_code == 404
    assert "pricing" not in answer.text

    web.cookies.clear()
    await sign_in(web)
    unknown = _context_url(seeded.subject_id, seeded.subject_id)
    assert (await web.get(unknown)).status_code == 404
    # A fetch another site starts is refused; the console's own is served
    refused = await web.get(url, headers={"Sec-Fetch-Site": "cross-site"})
    assert refused.status_code == 403
    assert "pricing" not in refused.text
    served = await web.get(url, headers={"Sec-Fetch-Site": "same-origin"})
    assert served.status_code == 200
    assert "pricing" in served.text
