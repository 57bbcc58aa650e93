"""The product story, driven through the ledger's commands, for the recall and sync tests.

A lead says in January (WhatsApp) that they work with Supplier A and might buy next quarter
if the pricing works; in March (voice call) confirms the intent and says they now work with
Supplier B; in June (chat) explains that they left Supplier A over late deliveries. A reviewer
approves the suppliers, the lead confirms the intent, and a model's inference is rejected.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from factledger.application.ledger.commands import (
    ApproveChange,
    ConfirmChange,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.sessions.short_term import ShortTermMemory
from factledger.application.sessions.types import SessionId
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

TENANT = "acme"
JAN = datetime(2026, 1, 14, 9, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 12, 15, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 3, 11, 0, tzinfo=UTC)
JAN_SAYS = "We work with Supplier A at the moment. Maybe next quarter, if the pricing works."
MAR_SAYS = "Yes, next quarter still holds if the pricing works. We now work with Supplier B."
JUN_SAYS = "We left Supplier A because the deliveries were always late."
MODEL = Actor(ActorKind.MODEL, "extractor-1")
REVIEWER = "rev-7"
# Every text a person said or a profile holds: none may ever appear in a log line.
SECRETS = (JAN_SAYS, MAR_SAYS, JUN_SAYS, "Supplier A", "Supplier B", "pricing works", "4111 1111")


@dataclass(frozen=True, slots=True)
class Story:
    subject_id: UUID
    rejected_change: UUID


def _session(
    ledger: Ledger, subject_id: UUID, session_id: str, channel: Channel, at: datetime, says: str
) -> None:
    ledger.record_session(
        RecordSession(
            tenant=TENANT,
            subject_id=subject_id,
            session_id=session_id,
            channel=channel,
            started_at=at,
            ended_at=at,
            transcript=(
                Message(Role.AGENT, "How are things going?", at),
                Message(Role.SUBJECT, says, at),
            ),
            summary={"text": f"{channel.value} check-in"},
        )
    )


def _propose(
    ledger: Ledger,
    subject_id: UUID,
    field: str,
    value: str,
    evidence: Evidence | None,
    *,
    condition: str | None = None,
    origin: Origin = Origin.STATED,
) -> UUID:
    version = ledger.subject(TENANT, subject_id).profile_version
    command = ProposeChange(
        tenant=TENANT,
        subject_id=subject_id,
        field=field,
        operation=Operation.SET,
        value=TextValue(value),
        origin=origin,
        proposed_by=MODEL,
        based_on_version=version,
        evidence=evidence,
        condition=condition,
    )
    ledger.propose_change(command)
    return command.change_id


Record = Callable[[UUID, str, Channel, datetime, str], None]
WITHHELD = "my card is 4111 1111 1111 1111"  # a message the safety filter must withhold


def drive_story(ledger: Ledger, clock: ManualClock) -> Story:
    """Runs the story, recording sessions straight into the ledger."""

    def record(
        subject_id: UUID, session_id: str, channel: Channel, at: datetime, says: str
    ) -> None:
        _session(ledger, subject_id, session_id, channel, at, says)

    return _story_steps(ledger, clock, record)


async def drive_story_through_short_term_memory(
    ledger: Ledger, clock: ManualClock, memory: ShortTermMemory
) -> Story:
    """Runs the story with every session going through short-term memory (and its filter)."""
    pending: list[tuple[UUID, str, Channel, datetime, str]] = []

    def queue(subject_id: UUID, session_id: str, channel: Channel, at: datetime, says: str) -> None:
        pending.append((subject_id, session_id, channel, at, says))

    async def flush() -> None:
        while pending:
            subject_id, session_id, channel, at, says = pending.pop(0)
            sid = SessionId(session_id)
            await memory.start(subject_id, sid, channel)
            await memory.add_message(sid, Message(Role.AGENT, "How are things going?", at))
            await memory.add_message(sid, Message(Role.SUBJECT, WITHHELD, at))
            await memory.add_message(sid, Message(Role.SUBJECT, says, at))
            await memory.end(sid, summary={"text": f"{channel.value} check-in"})

    return await _story_steps_async(ledger, clock, queue, flush)


def _story_steps(ledger: Ledger, clock: ManualClock, record: Record) -> Story:
    async def nothing() -> None:
        return None

    # No step awaits anything when sessions are recorded synchronously.
    coroutine = _story_steps_async(ledger, clock, record, nothing)
    try:
        coroutine.send(None)
    except StopIteration as done:
        story: Story = done.value
        return story
    raise RuntimeError("the synchronous story awaited something")


async def _story_steps_async(
    ledger: Ledger,
    clock: ManualClock,
    record: Record,
    flush: Callable[[], Awaitable[None]],
) -> Story:
    clock.set(JAN)
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-42")).subject_id
    record(subject_id, "wa-jan", Channel.WHATSAPP, JAN, JAN_SAYS)
    await flush()
    supplier_a = _propose(
        ledger, subject_id, "supplier", "Supplier A", Evidence("wa-jan", 1, "Supplier A")
    )
    ledger.approve_change(ApproveChange(TENANT, subject_id, supplier_a, REVIEWER))
    intent = _propose(
        ledger,
        subject_id,
        "purchase_intent",
        "next quarter",
        Evidence("wa-jan", 1, "Maybe next quarter"),
        condition="if the pricing works",
    )
    clock.set(MAR)
    record(subject_id, "call-mar", Channel.VOICE, MAR, MAR_SAYS)
    await flush()
    confirmation = Evidence("call-mar", 1, "next quarter still holds")
    ledger.confirm_change(ConfirmChange(TENANT, subject_id, intent, confirmation))
    supplier_b = _propose(
        ledger, subject_id, "supplier", "Supplier B", Evidence("call-mar", 1, "Supplier B")
    )
    ledger.approve_change(ApproveChange(TENANT, subject_id, supplier_b, REVIEWER))
    clock.set(JUN)
    record(subject_id, "chat-jun", Channel.CHAT, JUN, JUN_SAYS)
    await flush()
    inference = _propose(
        ledger, subject_id, "priority", "delivery reliability", None, origin=Origin.INFERRED
    )
    ledger.reject_change(
        RejectChange(TENANT, subject_id, inference, Actor(ActorKind.STAFF, REVIEWER), "a guess")
    )
    return Story(subject_id=subject_id, rejected_change=inference)


def forget_supplier(ledger: Ledger, clock: ManualClock, story: Story) -> None:
    clock.set(datetime(2026, 7, 1, tzinfo=UTC))
    ledger.forget_field(
        ForgetField(TENANT, story.subject_id, "supplier", Actor(ActorKind.STAFF, REVIEWER), "asked")
    )
