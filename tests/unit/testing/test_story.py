"""The one story: told straight into the ledger or through short-term memory, the ledger ends
up with the same sessions and profile; only the safety filter's work differs."""

from __future__ import annotations

from support.key_stores import PinnedSubjectIdKeys

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.ledger_sources import LedgerSessionRecorder
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.application.sessions.types import SessionRecording
from factledger.domain.subject import Subject
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import play_story_through_short_term_memory, run_story
from factledger.testing.story.script import REASON, SESSIONS, TENANT, WITHHELD, WITHHELD_IN
from factledger.testing.story.steps import forget


class WatchedRecorder(LedgerSessionRecorder):
    """Records into the ledger and notes how many messages each session had withheld."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__(ledger)
        self.withheld: dict[str, int] = {}

    async def record_session(self, recording: SessionRecording) -> None:
        self.withheld[recording.session_id] = recording.withheld
        await super().record_session(recording)


def said(subject: Subject) -> list[tuple[object, ...]]:
    """Each session as the ledger keeps it, but its fingerprint (it counts withheld messages)."""
    return [
        (s.session_id, s.channel, s.started_at, s.interaction_number, s.messages)
        for s in sorted(subject.sessions.values(), key=lambda s: s.interaction_number)
    ]


async def test_both_drivers_leave_the_same_sessions_and_profile() -> None:
    clock, stm_clock = ManualClock(), ManualClock()
    with (
        # One deployment's key of subject ids for both: the same reference, the same id.
        Ledger(popo_env(), clock=clock, keys=PinnedSubjectIdKeys(InMemoryKeyStore())) as straight,
        Ledger(popo_env(), clock=stm_clock, keys=PinnedSubjectIdKeys(InMemoryKeyStore())) as told,
    ):
        recorder = WatchedRecorder(told)
        ports = SessionPorts(InMemorySessionBuffer(), DetectorSafetyFilter(), recorder, stm_clock)
        ids = run_story(straight, clock)
        again = await play_story_through_short_term_memory(told, stm_clock, ShortTermMemory(ports))
        one = straight.subject(TENANT, ids.subject_id)
        other = told.subject(TENANT, again.subject_id)

    assert ids.subject_id == again.subject_id
    assert len(one.sessions) == len(SESSIONS)
    assert said(one) == said(other)
    assert (one.profile_version, set(one.fields)) == (other.profile_version, set(other.fields))
    assert one.forgotten_fields == {REASON.field}
    # the card number was said only to short-term memory, which withheld it
    assert recorder.withheld == {s.session_id: int(s.session_id == WITHHELD_IN) for s in SESSIONS}
    assert all(WITHHELD not in text for s in other.sessions.values() for _, text in s.messages)


def test_the_story_stops_after_the_month_asked_for() -> None:
    clock = ManualClock()
    with Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore()) as ledger:
        ids = run_story(ledger, clock, until="March")
        march = ledger.subject(TENANT, ids.subject_id)
        assert (len(march.sessions), march.profile_version) == (2, 3)
        assert set(march.fields) == {"supplier", "purchase_intent"}

        forget(ledger, clock, ids, "supplier")
        assert set(ledger.subject(TENANT, ids.subject_id).fields) == {"purchase_intent"}
