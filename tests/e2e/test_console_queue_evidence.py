"""The queue page's evidence in context, its subjects' streams read together: each quoting
subject's quote is shown, and words forgotten since are never shown."""

from __future__ import annotations

from collections.abc import AsyncIterator
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client
from support.console_seed import Seeded, seed_queue, sign_in

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
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


def _quoting_subject(ports: Runtime, clock: ManualClock, n: int) -> UUID:
    ledger = ports.ledger
    sid = ledger.register_subject(RegisterSubject(TENANT, "lead", f"lead-q{n}")).subject_id
    said = ("Who supplies you?", f"Quokka{n} Packaging, since spring.", "Thanks.")
    transcript = tuple(
        Message(role, text)
        for role, text in zip((Role.AGENT, Role.SUBJECT, Role.AGENT), said, strict=True)
    )
    at = clock.now()
    ledger.record_session(RecordSession(TENANT, sid, "call-1", Channel.CHAT, at, at, transcript))
    ledger.propose_change(
        ProposeChange(
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
    )
    return sid


async def test_the_queue_quotes_every_subjects_evidence_and_no_forgotten_words(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded, clock: ManualClock
) -> None:
    # Given the story's lead (its supplier quoted from its January chat) and three more
    # subjects quoting a line of their own
    for n in range(3):
        _quoting_subject(ports, clock, n)
    ports.catch_up()
    await sign_in(web)

    # Then the queue page quotes each of them
    page = (await web.get("/console/queue")).text
    for words in ("Supplier A", "Quokka0 Packaging", "Quokka1 Packaging", "Quokka2 Packaging"):
        assert words in page

    # When the lead's supplier is approved and then forgotten (its line's key goes)
    ledger = ports.ledger
    sid = seeded.subject_id
    ledger.approve_change(ApproveChange(TENANT, sid, seeded.changes["supplier_a"], "rev"))
    ledger.forget_field(
        ForgetField(TENANT, sid, "supplier", Actor(ActorKind.SUBJECT, "lead"), "asked")
    )
    ports.catch_up()

    # Then the page never shows that line's words again; the other subjects' stay
    page = (await web.get("/console/queue")).text
    assert "Supplier A" not in page
    for n in range(3):
        assert f"Quokka{n} Packaging" in page
