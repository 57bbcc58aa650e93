"""A tenant's review queue for the console's tests: the story's lead after its January chat.

The product's model has reviewed the chat, so the queue holds its four proposals (supplier,
budget, the conditional purchase intent and the inference nobody said), all pending; a second
tenant holds one subject of its own. A sign-in helper drives the console's form over HTTP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from uuid import UUID

import httpx
from support.api_harness import token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.sync.types import SyncItem, SyncKind
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.model import proposed, review_session
from factledger.testing.story.script import (
    BUDGET,
    INFERENCE,
    INTENT,
    JAN,
    JAN_REVIEW,
    JANUARY_CHAT,
    KIND,
    REF,
    SUPPLIER_A,
    TENANT,
)
from factledger.testing.story.steps import session_command

OTHER_TENANT = "globex"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass(frozen=True, slots=True)
class Seeded:
    subject_id: UUID
    other_subject_id: UUID  # in OTHER_TENANT
    changes: dict[str, UUID]  # by the story's name: supplier_a, budget, intent, inference


def seed_queue(ports: Runtime, clock: ManualClock) -> Seeded:
    ledger = ports.ledger
    clock.set(JAN)
    subject_id = ledger.register_subject(RegisterSubject(TENANT, KIND, REF)).subject_id
    other = ledger.register_subject(RegisterSubject(OTHER_TENANT, KIND, "lead-9")).subject_id
    ledger.record_session(session_command(subject_id, JANUARY_CHAT))
    review_session(ledger, TENANT, subject_id, JANUARY_CHAT.session_id)
    changes = {
        c.name: proposed(ledger, TENANT, subject_id, JANUARY_CHAT.session_id, c.field)
        for c in (SUPPLIER_A, BUDGET, INTENT, INFERENCE)
    }
    clock.set(JAN_REVIEW)
    ports.catch_up()
    return Seeded(subject_id, other, changes)


async def seed_dead_letter(ports: Runtime, subject_id: UUID) -> str:
    """One item of the subject's the sync gave up on (as after three failed writes)."""
    store = ports.sync_store
    assert store is not None
    position = await store.position()
    item = SyncItem(
        f"{position + 1}.0",
        position + 1,
        subject_id,
        SyncKind.SUMMARY,
        ("summary.x",),
        tenant=TENANT,
    )
    assert await store.enqueue([item], after=position, upto=position + 1)
    claimed = await store.claim("test-worker", limit=1, lease_s=60)
    await store.fail(claimed[0].item_id, error_type="MemoryUnavailableError", retry_in_s=None)
    return item.item_id


def csrf_of(page: str) -> str:
    found = _CSRF.search(page)
    assert found is not None, "the page has no CSRF field"
    return found.group(1)


async def sign_in(
    client: httpx.AsyncClient, role: Role = Role.REVIEWER, *, tenant: str = TENANT
) -> httpx.Response:
    """Signs the client in through the form (its cookies keep the session)."""
    form = await client.get("/console/sign-in")
    jwt = token(role, tenant=tenant, kind=KIND if role is Role.AGENT else None, ref=REF)
    data = {"token": jwt, "csrf": csrf_of(form.text)}
    return await client.post("/console/sign-in", data=data)
