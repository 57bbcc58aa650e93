"""Webhook delivery: each endpoint gets its tenant's events in order, signed; a failure is
retried after a growing wait and given up after the last attempt; every attempt is logged and
the position survives a new dispatcher."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from factledger.adapters.in_memory.delivery_log import InMemoryDeliveryLog
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.commands import (
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.event_log import TenantEventLog
from factledger.application.ledger.ledger import Ledger
from factledger.application.webhooks.dispatch import Endpoint, WebhookDispatcher
from factledger.application.webhooks.ports import Outcome, WebhookUnreachableError
from factledger.application.webhooks.signing import ID_HEADER, verify
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

SECRET = b"a-shared-secret-of-at-least-32-bytes!"
CRM = Endpoint("crm", "acme", "https://crm.invalid/hook", SECRET, max_attempts=3)


@dataclass
class FakeReceiver:
    """Answers each POST with the next scripted status (200 once the script runs out); a
    `None` in the script is an unreachable endpoint."""

    script: list[int | None] = field(default_factory=list)
    received: list[tuple[dict[str, Any], Mapping[str, str], bytes]] = field(default_factory=list)

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, timeout_s: float
    ) -> int:
        status = self.script.pop(0) if self.script else 200
        if status is None:
            raise WebhookUnreachableError("unreachable") from ConnectionRefusedError()
        self.received.append((json.loads(body), headers, body))
        return status


def delivery_id(ledger: Ledger, position: int) -> str:
    """The delivery id of the event at that log position: the endpoint and its cursor."""
    return f"crm:{TenantEventLog(ledger).cursors.cursor('acme', position)}"


def story(ledger: Ledger) -> None:
    lead = ledger.register_subject(RegisterSubject("acme", "lead", "crm-1")).subject_id
    ledger.register_subject(RegisterSubject("other", "lead", "crm-1"))
    actor = Actor(ActorKind.AGENT, "voice-bot")
    ledger.propose_change(
        ProposeChange(
            "acme",
            lead,
            "supplier",
            Operation.SET,
            TextValue("Supplier A"),
            Origin.INFERRED,
            actor,
            0,
            rationale="they said so",
        )
    )


def dispatcher(
    ledger: Ledger,
    receiver: FakeReceiver,
    log: InMemoryDeliveryLog,
    clock: ManualClock,
    endpoint: Endpoint = CRM,
) -> WebhookDispatcher:
    return WebhookDispatcher(
        [endpoint], events=TenantEventLog(ledger), log=log, sender=receiver, clock=clock
    )


async def test_each_event_of_the_tenant_arrives_in_order_signed_and_without_content() -> None:
    # The receiver's check compares the signed time with its own clock.
    clock, receiver, log = ManualClock(datetime.now(UTC)), FakeReceiver(), InMemoryDeliveryLog()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    story(ledger)
    with structlog.testing.capture_logs() as logs:
        assert await dispatcher(ledger, receiver, log, clock).run_once() == 2
    bodies = [body for body, _, _ in receiver.received]
    assert [b["event"]["type"] for b in bodies] == ["registered", "change_proposed"]
    # Each id is the endpoint and the event's opaque cursor: the log's positions (1 and 3:
    # position 2 is another tenant's) would show that tenant's volume.
    cursors = TenantEventLog(ledger).cursors
    assert [b["id"] for b in bodies] == [f"crm:{cursors.cursor('acme', p)}" for p in (1, 3)]
    assert [b["event"]["cursor"] for b in bodies] == [b["id"][4:] for b in bodies]
    assert all("position" not in b["event"] for b in bodies)
    assert bodies[1]["event"]["payload"]["value"] is None
    for body, headers, raw in receiver.received:
        assert verify(SECRET, headers, raw)
        assert headers[ID_HEADER] == body["id"]
    assert await log.position("crm") == 3
    assert "Supplier A" not in repr(logs)


async def test_an_endpoint_configured_for_content_gets_it() -> None:
    clock, receiver, log = ManualClock(), FakeReceiver(), InMemoryDeliveryLog()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    story(ledger)
    with_content = Endpoint("crm", "acme", CRM.url, SECRET, content=True)
    await dispatcher(ledger, receiver, log, clock, with_content).run_once()
    proposal = receiver.received[1][0]["event"]
    assert proposal["payload"]["value"] == {"type": "text", "value": "Supplier A"}


async def test_a_failure_waits_its_backoff_then_is_retried_and_later_events_wait_for_it() -> None:
    clock, log = ManualClock(), InMemoryDeliveryLog()
    receiver = FakeReceiver(script=[503])
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    story(ledger)
    hooks = dispatcher(ledger, receiver, log, clock)
    assert await hooks.run_once() == 1  # the first event failed: the second is not sent
    assert receiver.received[0][0]["id"] == delivery_id(ledger, 1)
    assert await hooks.run_once() == 0  # still within its backoff (1 s)
    clock.advance(timedelta(seconds=1))
    assert await hooks.run_once() == 2
    assert [b["id"] for b, _, _ in receiver.received] == [
        delivery_id(ledger, p) for p in (1, 1, 3)
    ]  # a retry keeps its id
    attempts = [(d.position, d.attempt, d.outcome) for d in await log.deliveries("crm", limit=9)]
    assert attempts == [
        (3, 1, Outcome.DELIVERED),
        (1, 2, Outcome.DELIVERED),
        (1, 1, Outcome.FAILED),
    ]


async def test_the_last_failed_attempt_gives_the_event_up_and_moves_on() -> None:
    clock, log = ManualClock(), InMemoryDeliveryLog()
    receiver = FakeReceiver(script=[None, 500, 500])
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    story(ledger)
    hooks = dispatcher(ledger, receiver, log, clock)
    for _ in range(3):
        await hooks.run_once()
        clock.advance(timedelta(seconds=10))
    outcomes = [(d.position, d.outcome, d.error) for d in await log.deliveries("crm", limit=9)]
    assert (
        outcomes[-3:]
        == [
            (1, Outcome.GAVE_UP, "http_500"),
            (1, Outcome.FAILED, "http_500"),
            (1, Outcome.FAILED, "ConnectionRefusedError"),
        ][::-1][::-1]
    )
    assert [b["id"] for b, _, _ in receiver.received][-1] == delivery_id(ledger, 3)
    assert await log.position("crm") == 3


async def test_a_new_dispatcher_resumes_from_the_logged_position() -> None:
    clock, receiver, log = ManualClock(), FakeReceiver(), InMemoryDeliveryLog()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    story(ledger)
    await dispatcher(ledger, receiver, log, clock).run_once()
    ledger.register_subject(RegisterSubject("acme", "customer", "acct-1"))
    again = FakeReceiver()
    assert await dispatcher(ledger, again, log, clock).run_once() == 1
    assert [b["event"]["subject_kind"] for b, _, _ in again.received] == ["customer"]


async def test_a_forgotten_fields_words_reach_no_endpoint_replayed_from_the_start() -> None:
    """A content endpoint added after a field was forgotten (delivery from the start), and one
    that had delivered half the log before: neither receives the words that stated it."""
    clock, log = ManualClock(datetime.now(UTC)), InMemoryDeliveryLog()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    lead = ledger.register_subject(RegisterSubject("acme", "lead", "crm-1")).subject_id
    said = (
        Message(Role.SUBJECT, "Our budget is Zanzibar Periwinkle."),
        Message(Role.SUBJECT, "We like Walrus Lantern."),
    )
    ledger.record_session(RecordSession("acme", lead, "s1", Channel.CHAT, clock.now(), None, said))
    ledger.propose_change(
        ProposeChange(
            "acme",
            lead,
            "budget",
            Operation.SET,
            TextValue("Zanzibar Periwinkle"),
            Origin.STATED,
            Actor(ActorKind.AGENT, "voice-bot"),
            0,
            evidence=Evidence("s1", 0, "Zanzibar Periwinkle"),
        )
    )
    content = Endpoint("crm", "acme", "https://crm.invalid/hook", SECRET, content=True)
    early = FakeReceiver()
    assert await dispatcher(ledger, early, log, clock, content).run_once() == 3
    ledger.forget_field(
        ForgetField("acme", lead, "budget", Actor(ActorKind.STAFF, "admin-1"), "asked")
    )
    late = FakeReceiver()
    fresh = InMemoryDeliveryLog()
    await dispatcher(ledger, late, fresh, clock, content).run_once()
    await dispatcher(ledger, early, log, clock, content).run_once()
    from_start = json.dumps([body for body, _, _ in late.received])
    after_forget = json.dumps([body for body, _, _ in early.received[3:]])
    for sent in (from_start, after_forget):
        assert "Zanzibar" not in sent
    assert "Walrus Lantern" in from_start  # the subject's other words stay
    assert [b["event"]["type"] for b, _, _ in early.received[3:]] == ["fact_forgotten"]
