"""Ways to tell the story: straight into the ledger, or with every session going through
short-term memory (and its safety filter) the way a live agent records one."""

from __future__ import annotations

from factledger.application.ledger.commands import RecordSession
from factledger.application.ledger.ledger import Ledger
from factledger.application.sessions.short_term import ShortTermMemory
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import WITHHELD, WITHHELD_IN, Month
from factledger.testing.story.steps import Say, StoryIds, play_story


def _quietly(_: str) -> None:
    return None


async def _no_checkpoint(_: Month) -> None:
    return None


def run_story(
    ledger: Ledger, clock: ManualClock, say: Say = _quietly, *, until: Month = "July"
) -> StoryIds:
    """Plays the story with every session recorded straight into the ledger."""

    async def record(session: RecordSession) -> None:
        ledger.record_session(session)

    # Nothing suspends when sessions go straight into the ledger: drive the coroutine by hand.
    story = play_story(ledger, clock, say, record=record, checkpoint=_no_checkpoint, until=until)
    try:
        story.send(None)
    except StopIteration as done:
        ids: StoryIds = done.value
        return ids
    story.close()
    raise RuntimeError("the synchronous story awaited something")


async def tell_short_term_memory(memory: ShortTermMemory, session: RecordSession) -> bool:
    """Sends one session through short-term memory a message a turn, with the card number the
    lead shares in January; returns whether the safety filter withheld it."""
    key = SessionKey(session.subject_id, SessionId(session.session_id))
    await memory.start(key.subject_id, key.session_id, session.channel)
    for message in session.transcript:
        await memory.add_message(key, message)
    withheld = False
    if session.session_id == WITHHELD_IN:
        card = Message(Role.SUBJECT, WITHHELD, session.transcript[-1].at)
        withheld = not (await memory.add_message(key, card)).kept
    await memory.end(key, summary=session.summary)
    return withheld


async def play_story_through_short_term_memory(
    ledger: Ledger, clock: ManualClock, memory: ShortTermMemory, *, until: Month = "July"
) -> StoryIds:
    """Plays the story with every session going through `memory`, silently."""

    async def record(session: RecordSession) -> None:
        await tell_short_term_memory(memory, session)

    return await play_story(
        ledger, clock, _quietly, record=record, checkpoint=_no_checkpoint, until=until
    )
