"""A rebuild from the stored events equals the live views on every event store, whichever
decoder reads the events (ours through orjson, or the library's), and forgotten or erased
content reappears in no view. PostgreSQL's run is in tests/integration/on_postgres."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from eventsourcing.persistence import JSONTranscoder, StoredEvent
from eventsourcing.utils import resolve_topic

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.application.ledger.cipher import ShreddingMapper, sealed_again
from factledger.application.ledger.commands import (
    EraseSubject,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.transcoder import TopLevelJSONTranscoder
from factledger.domain.events import ChangeProposed
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import JsonObject, TextValue
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.testing.ledger_stores import LedgerStore, open_ledger
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN, TENANT

FORGOTTEN_IN_STORY = "arriving late"
ERASED_VALUE = "a rival quoted them nine percent less"
STAFF = Actor(ActorKind.STAFF, "reviewer-1")

Dump = dict[str, list[tuple[str, JsonObject]]]


@dataclass
class Told:
    ledger: Ledger
    live: Dump


@pytest.fixture
def told(ledger_store: LedgerStore) -> Iterator[Told]:
    """The story (with its forget) and a second subject erased, projected live after every
    step into an in-memory view store."""
    with open_ledger(ledger_store, clock=ManualClock(JAN)) as ledger:
        live = ProfileProjection(InMemoryViewStore("profile"))
        follower = Follower(ledger, [live], page=3)
        run_story(ledger, ledger.clock, lambda _: follower.catch_up())  # type: ignore[arg-type]
        other = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-erased")).subject_id
        said = (Message(Role.SUBJECT, ERASED_VALUE),)
        at = ledger.clock.now()
        ledger.record_session(RecordSession(TENANT, other, "call-9", Channel.VOICE, at, at, said))
        ledger.propose_change(
            ProposeChange(
                TENANT,
                other,
                "competitor_offer",
                Operation.SET,
                TextValue(ERASED_VALUE),
                Origin.STATED,
                Actor(ActorKind.MODEL, "m"),
                0,
                evidence=Evidence("call-9", 0, ERASED_VALUE),
                rationale=ERASED_VALUE,
            )
        )
        follower.catch_up()
        ledger.erase_subject(EraseSubject(TENANT, other, STAFF, "the lead asked"))
        follower.catch_up()
        yield Told(ledger, live.dump())


def _rebuilt(ledger: Ledger, *, page: int) -> Dump:
    projection = ProfileProjection(InMemoryViewStore("profile"))
    projection.rebuild(ledger, page=page)
    return projection.dump()


def _library_transcoder(ledger: Ledger) -> JSONTranscoder:
    transcoder = JSONTranscoder()
    ledger.register_transcodings(transcoder)
    return transcoder


@pytest.mark.parametrize("page", [1, 5, 500])
def test_a_rebuild_from_the_stored_events_equals_the_live_views(told: Told, page: int) -> None:
    assert isinstance(told.ledger.mapper.transcoder, TopLevelJSONTranscoder)
    assert _rebuilt(told.ledger, page=page) == told.live


def test_the_library_decoder_builds_the_same_views(told: Told) -> None:
    fast = _rebuilt(told.ledger, page=500)
    told.ledger.mapper.transcoder = _library_transcoder(told.ledger)
    slow = _rebuilt(told.ledger, page=500)
    assert json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True)


def test_every_stored_event_decodes_as_the_library_decodes_it(told: Told) -> None:
    library = _library_transcoder(told.ledger)
    stored = told.ledger.recorder.select_notifications(start=1, limit=10_000)
    assert len(stored) > 20
    for event in stored:
        assert told.ledger.mapper.transcoder.decode(event.state) == library.decode(event.state)


def test_forgotten_and_erased_content_is_in_no_rebuilt_view(told: Told) -> None:
    on_a_server = ProfileProjection(_ServerCommitted("profile"))
    on_a_server.rebuild(told.ledger)  # read ahead, in a server's pages (`SERVER_PAGE`)
    assert on_a_server.dump() == told.live
    for views in (_rebuilt(told.ledger, page=1), _rebuilt(told.ledger, page=500)):
        text = json.dumps(views)
        assert FORGOTTEN_IN_STORY not in text
        assert ERASED_VALUE not in text
    assert ERASED_VALUE not in json.dumps(told.live)


class _ReadingTheWords(ProfileProjection):
    """The profile projection as it was before it declared it never reads a line's words."""

    reads_transcript_text = True


def test_views_built_without_opening_the_lines_equal_views_built_with_them(told: Told) -> None:
    with_words = _ReadingTheWords(InMemoryViewStore("profile"))
    with_words.rebuild(told.ledger, page=500)
    assert _rebuilt(told.ledger, page=500) == with_words.dump() == told.live
    sessions = with_words.dump()["session"]
    assert sessions
    assert all(isinstance(doc["message_count"], int) for _, doc in sessions)


class _ServerCommitted(InMemoryViewStore):
    """Views as a server-committed store presents them: a rebuild reads ahead, in its larger
    pages (`SERVER_PAGE`)."""

    commits_on_a_server = True


def test_a_field_sealed_under_another_key_than_its_events_first_still_opens(
    ledger_store: LedgerStore,
) -> None:
    """A page collects one key per event but a session's (all of an event's fields share a
    scope); a field sealed under another key is opened with that key, read when met."""
    with open_ledger(ledger_store, clock=ManualClock(JAN)) as ledger:
        subject = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-1")).subject_id
        ledger.propose_change(
            ProposeChange(
                TENANT,
                subject,
                "supplier",
                Operation.SET,
                TextValue("Acme"),
                Origin.INFERRED,
                Actor(ActorKind.MODEL, "m"),
                0,
                rationale="said on the call",
            )
        )
        mapper = ledger.mapper
        assert isinstance(mapper, ShreddingMapper)
        assert mapper.cipher is None  # the state is stored as the transcoder encodes it
        assert mapper.compressor is None
        (stored,) = ledger.recorder.select_notifications(
            start=1, limit=10, topics=[ChangeProposed.TOPIC]
        )
        state = mapper.stored_state(stored)
        cls = resolve_topic(stored.topic)
        other = mapper.keys.current("another scope")
        bound = {**state, "originator_id": stored.originator_id}  # what a seal is bound to
        state["rationale"] = sealed_again(other, "said elsewhere", bound, cls, "rationale")
        resealed = StoredEvent(
            stored.originator_id,
            stored.originator_version,
            stored.topic,
            mapper.transcoder.encode(state),
        )
        mapper.forget_cached()
        (event,) = mapper.to_domain_events([resealed], transcript_text=False)
    assert isinstance(event, ChangeProposed)
    assert event.rationale == "said elsewhere"
    assert event.value == {"type": "text", "value": "Acme"}  # a payload, as stored
