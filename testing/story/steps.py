"""The story's steps, month by month, over the ledger's commands.

`play_story` registers the lead, then plays January, March, June and July, handing every
session to `record` (straight into the ledger, or through short-term memory), letting the
product's model review it (`model.review_session`: no proposal is scripted) and awaiting
`checkpoint(month)` after each month; `until` stops it after a given month. `say` receives one
line per step, in the story's words, for the demo to print (tests use it as a hook).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from uuid import UUID

from factledger.application.ledger.commands import (
    ApproveChange,
    ConfirmChange,
    ForgetField,
    RecordSession,
    RegisterSubject,
    RejectChange,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Message
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.model import proposed, review_session
from factledger.testing.story.script import (
    BUDGET,
    FORGET_REASON,
    INFERENCE,
    INTENT,
    INTENT_CONFIRMATION,
    JAN,
    JAN_REVIEW,
    JANUARY_CHAT,
    JULY,
    JUNE_CHAT,
    JUNE_REVIEW,
    KIND,
    LEAD,
    MARCH_CALL,
    MARCH_REVIEW,
    MODEL,
    REASON,
    REF,
    REJECTION_REASON,
    REVIEWER,
    SUPPLIER_A,
    SUPPLIER_B,
    TENANT,
    Month,
    StoryChange,
    StorySession,
)

Say = Callable[[str], None]
SessionSink = Callable[[RecordSession], Awaitable[None]]
Checkpoint = Callable[[Month], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class StoryModel:
    """The model that reviews each recorded session, and the actor it proposes as; without
    one, the rules (`model.review_session`). The demo passes the product's configured one."""

    review: Callable[[UUID, str], Awaitable[None]]
    actor: Actor


@dataclass
class StoryIds:
    """The lead's subject id and the change id of every change the model proposed, by the
    story's name for it (`script.CHANGES`)."""

    subject_id: UUID
    changes: dict[str, UUID] = field(default_factory=dict)


def session_command(subject_id: UUID, session: StorySession) -> RecordSession:
    """The session as one finished interaction, every message at the session's time."""
    return RecordSession(
        tenant=TENANT,
        subject_id=subject_id,
        session_id=session.session_id,
        channel=session.channel,
        started_at=session.at,
        ended_at=session.at,
        transcript=tuple(Message(role, text, session.at) for role, text in session.lines),
        summary={"text": session.summary},
    )


def forget(ledger: Ledger, clock: ManualClock, ids: StoryIds, field_name: str) -> None:
    """The lead asks, in July, to forget one field (the story forgets the reason)."""
    clock.set(JULY)
    forget_field = ForgetField(TENANT, ids.subject_id, field_name, LEAD, FORGET_REASON)
    ledger.forget_field(forget_field)


@dataclass
class _Scene:
    ledger: Ledger
    clock: ManualClock
    say: Say
    record: SessionSink
    ids: StoryIds
    model: StoryModel | None = None

    async def hold(self, session: StorySession) -> None:
        """The session is recorded, then the product's model reviews it (as the sync worker
        does after every recording; whichever comes first, the other finds it reviewed)."""
        self.clock.set(session.at)
        await self.record(session_command(self.ids.subject_id, session))
        if self.model is None:
            review_session(self.ledger, TENANT, self.ids.subject_id, session.session_id)
        else:
            await self.model.review(self.ids.subject_id, session.session_id)

    def note(self, change: StoryChange) -> None:
        """Remembers the change the model proposed, under the story's name for it."""
        sid, session = self.ids.subject_id, change.session.session_id
        actor = MODEL if self.model is None else self.model.actor
        self.ids.changes[change.name] = proposed(
            self.ledger, TENANT, sid, session, change.field, actor
        )

    def approve(self, change: StoryChange) -> None:
        change_id = self.ids.changes[change.name]
        self.ledger.approve_change(ApproveChange(TENANT, self.ids.subject_id, change_id, REVIEWER))


async def _january(scene: _Scene) -> None:
    await scene.hold(JANUARY_CHAT)
    scene.say("January (WhatsApp): the lead names Supplier A and a conditional purchase intent")
    for change in (SUPPLIER_A, BUDGET, INTENT, INFERENCE):
        scene.note(change)
    scene.say(
        "January: the model proposes supplier, budget, intent (with its condition) and an inference"
    )
    scene.clock.set(JAN_REVIEW)
    scene.approve(SUPPLIER_A)
    scene.say(f"January: {REVIEWER} approves 'supplier = Supplier A' (version 1)")
    reviewer = Actor(ActorKind.STAFF, REVIEWER)
    inference = scene.ids.changes[INFERENCE.name]
    rejection = RejectChange(TENANT, scene.ids.subject_id, inference, reviewer, REJECTION_REASON)
    scene.ledger.reject_change(rejection)
    scene.say(f"January: {REVIEWER} rejects the inferred 'price is an important factor for them'")


async def _march(scene: _Scene) -> None:
    await scene.hold(MARCH_CALL)
    scene.say("March (voice call): the lead moved to Supplier B and reaffirms the intent")
    scene.note(SUPPLIER_B)
    scene.say("March: the model proposes 'supplier = Supplier B', an update")
    intent = scene.ids.changes[INTENT.name]
    confirmation = ConfirmChange(TENANT, scene.ids.subject_id, intent, INTENT_CONFIRMATION)
    scene.ledger.confirm_change(confirmation)
    scene.say("March: the lead confirms the purchase intent in the call (version 2)")
    scene.clock.set(MARCH_REVIEW)
    scene.approve(SUPPLIER_B)
    scene.say(f"March: {REVIEWER} approves 'supplier = Supplier B' (version 3)")


async def _june(scene: _Scene) -> None:
    await scene.hold(JUNE_CHAT)
    scene.note(REASON)
    scene.clock.set(JUNE_REVIEW)
    scene.approve(REASON)
    scene.say("June (chat): the reason, late deliveries, is proposed and approved (version 4)")


async def _july(scene: _Scene) -> None:
    forget(scene.ledger, scene.clock, scene.ids, REASON.field)
    scene.say("July: the lead asks to forget the reason; version 5 no longer has it")


_MONTHS: tuple[tuple[Month, Callable[[_Scene], Awaitable[None]]], ...] = (
    ("January", _january),
    ("March", _march),
    ("June", _june),
    ("July", _july),
)


async def play_story(
    ledger: Ledger,
    clock: ManualClock,
    say: Say,
    *,
    record: SessionSink,
    checkpoint: Checkpoint,
    until: Month = "July",
    model: StoryModel | None = None,
) -> StoryIds:
    """Plays the story up to the end of `until` and returns the ids it created; `model`
    reviews the sessions (default: the rules, as the tests expect their proposals)."""
    clock.set(JAN)
    subject_id = ledger.register_subject(RegisterSubject(TENANT, KIND, REF)).subject_id
    say(f"January: lead {REF} registered in tenant {TENANT}")
    scene = _Scene(ledger, clock, say, record, StoryIds(subject_id), model)
    for month, steps in _MONTHS:
        await steps(scene)
        await checkpoint(month)
        if month == until:
            break
    return scene.ids
