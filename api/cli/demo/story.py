"""The story of the ledger, scripted: what `factledger demo` runs and the e2e test checks.

A lead says in January (WhatsApp) they work with Supplier A and might buy "next quarter, if
the pricing works"; in March (voice) that they moved to Supplier B; in June that it was the
delivery delays. A model proposes, the lead confirms one change in a later call, a reviewer
approves others and rejects an inference; finally the lead asks to forget the reason.

`run_story` records the sessions straight into the ledger; `play_story` lets the caller record
them (the demo sends them through short-term memory) and look around after each month.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
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
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue

TENANT, KIND, REF = "acme", "lead", "lead-0042"
MODEL = Actor(ActorKind.MODEL, "extractor-v1")
REVIEWER = "reviewer-07"

JAN = datetime(2026, 1, 12, 10, 0, tzinfo=UTC)
JAN_REVIEW = datetime(2026, 1, 13, 9, 0, tzinfo=UTC)
MARCH = datetime(2026, 3, 3, 15, 0, tzinfo=UTC)
MARCH_REVIEW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
JUNE = datetime(2026, 6, 18, 11, 0, tzinfo=UTC)
JUNE_REVIEW = datetime(2026, 6, 19, 9, 0, tzinfo=UTC)
JULY = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

INTENT_QUOTE = "Maybe next quarter, if the pricing works"
CONDITION = "if the pricing works"


class StoryClock:
    """A clock the story moves by hand, so every version carries the story's dates."""

    def __init__(self, start: datetime = JAN) -> None:
        self._now = start

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when


@dataclass
class StoryIds:
    subject_id: UUID
    changes: dict[str, UUID] = field(default_factory=dict)


Step = Callable[[str], None]
SessionSink = Callable[[RecordSession], Awaitable[None]]
Checkpoint = Callable[[str], Awaitable[None]]


def _session(
    sid: UUID, session_id: str, channel: Channel, at: datetime, *lines: tuple[Role, str]
) -> RecordSession:
    return RecordSession(
        tenant=TENANT,
        subject_id=sid,
        session_id=session_id,
        channel=channel,
        started_at=at,
        ended_at=at,
        transcript=tuple(Message(role, text, at) for role, text in lines),
    )


def _propose(ids: StoryIds, name: str, field_name: str, value: str, **kw: object) -> ProposeChange:
    cmd = ProposeChange(
        tenant=TENANT,
        subject_id=ids.subject_id,
        field=field_name,
        operation=Operation.SET,
        value=TextValue(value),
        origin=kw.pop("origin", Origin.STATED),  # type: ignore[arg-type]
        proposed_by=MODEL,
        **kw,  # type: ignore[arg-type]
    )
    ids.changes[name] = cmd.change_id
    return cmd


def _approve(ids: StoryIds, name: str) -> ApproveChange:
    return ApproveChange(TENANT, ids.subject_id, ids.changes[name], REVIEWER)


def run_story(ledger: Ledger, clock: StoryClock, say: Step) -> StoryIds:
    """Runs the story on `ledger`; `say` receives one line per step, for the demo to print."""

    async def record(cmd: RecordSession) -> None:
        ledger.record_session(cmd)

    async def look(month: str) -> None:
        return None

    # Nothing suspends when sessions go straight into the ledger: drive the coroutine by hand.
    story = play_story(ledger, clock, say, record=record, checkpoint=look)
    try:
        story.send(None)
    except StopIteration as done:
        ids: StoryIds = done.value
        return ids
    story.close()
    raise RuntimeError("the synchronous story awaited something")


async def play_story(
    ledger: Ledger, clock: StoryClock, say: Step, *, record: SessionSink, checkpoint: Checkpoint
) -> StoryIds:
    """The story, with sessions handed to `record` and `checkpoint(month)` awaited at the end
    of January, March, June and July."""
    clock.set(JAN)
    ids = StoryIds(ledger.register_subject(RegisterSubject(TENANT, KIND, REF)).subject_id)
    say(f"January: lead {REF} registered in tenant {TENANT}")
    await record(
        _session(
            ids.subject_id,
            "wa-2026-01-12",
            Channel.WHATSAPP,
            JAN,
            (Role.AGENT, "Hi! Who supplies your packaging today?"),
            (Role.SUBJECT, "We work with Supplier A at the moment."),
            (Role.AGENT, "Would you consider switching to us?"),
            (Role.SUBJECT, f"{INTENT_QUOTE}."),
        )
    )
    say("January (WhatsApp): the lead names Supplier A and a conditional purchase intent")
    ledger.propose_change(
        _propose(
            ids,
            "supplier_a",
            "supplier",
            "Supplier A",
            based_on_version=0,
            evidence=Evidence("wa-2026-01-12", 1, "Supplier A"),
        )
    )
    ledger.propose_change(
        _propose(
            ids,
            "intent",
            "purchase_intent",
            "move the whole packaging line to us next quarter",
            based_on_version=0,
            condition=CONDITION,
            evidence=Evidence("wa-2026-01-12", 3, INTENT_QUOTE),
        )
    )
    ledger.propose_change(
        _propose(
            ids,
            "decided",
            "decision_stage",
            "decided to buy",
            based_on_version=0,
            origin=Origin.INFERRED,
            rationale="sounds keen",
        )
    )
    say("January: the model proposes supplier, intent (with its condition) and an inference")
    clock.set(JAN_REVIEW)
    ledger.approve_change(_approve(ids, "supplier_a"))
    say(f"January: {REVIEWER} approves 'supplier = Supplier A' (version 1)")
    ledger.reject_change(
        RejectChange(
            TENANT,
            ids.subject_id,
            ids.changes["decided"],
            Actor(ActorKind.STAFF, REVIEWER),
            "an inference: nobody decided anything",
        )
    )
    say(f"January: {REVIEWER} rejects the inferred 'decision_stage = decided to buy'")
    await checkpoint("January")

    clock.set(MARCH)
    await record(
        _session(
            ids.subject_id,
            "call-2026-03-03",
            Channel.VOICE,
            MARCH,
            (Role.AGENT, "Still working with Supplier A?"),
            (Role.SUBJECT, "No, we moved to Supplier B last month. We now work with Supplier B."),
            (Role.AGENT, "And the plan for next quarter, is it still on?"),
            (Role.SUBJECT, "Yes, that still holds, if the pricing works."),
        )
    )
    say("March (voice call): the lead moved to Supplier B and reaffirms the intent")
    ledger.propose_change(
        _propose(
            ids,
            "supplier_b",
            "supplier",
            "Supplier B",
            based_on_version=1,
            evidence=Evidence("call-2026-03-03", 1, "we moved to Supplier B"),
        )
    )
    ledger.confirm_change(
        ConfirmChange(
            TENANT,
            ids.subject_id,
            ids.changes["intent"],
            Evidence("call-2026-03-03", 3, "Yes, that still holds"),
        )
    )
    say("March: the lead confirms the purchase intent in the call (version 2)")
    clock.set(MARCH_REVIEW)
    ledger.approve_change(_approve(ids, "supplier_b"))
    say(f"March: {REVIEWER} approves 'supplier = Supplier B' (version 3)")
    await checkpoint("March")

    clock.set(JUNE)
    await record(
        _session(
            ids.subject_id,
            "chat-2026-06-18",
            Channel.CHAT,
            JUNE,
            (Role.AGENT, "Why did you leave Supplier A, if I may ask?"),
            (Role.SUBJECT, "Their delivery delays were hurting us."),
        )
    )
    ledger.propose_change(
        _propose(
            ids,
            "reason",
            "switch_reason",
            "delivery delays at Supplier A",
            based_on_version=3,
            evidence=Evidence("chat-2026-06-18", 1, "delivery delays"),
        )
    )
    clock.set(JUNE_REVIEW)
    ledger.approve_change(_approve(ids, "reason"))
    say("June (chat): the reason, delivery delays, is proposed and approved (version 4)")
    await checkpoint("June")

    clock.set(JULY)
    ledger.forget_field(
        ForgetField(
            TENANT,
            ids.subject_id,
            "switch_reason",
            Actor(ActorKind.SUBJECT, REF),
            "the lead asked",
        )
    )
    say("July: the lead asks to forget the reason; version 5 no longer has it")
    await checkpoint("July")
    return ids
