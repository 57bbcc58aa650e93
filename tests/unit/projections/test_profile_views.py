"""The profile views tell the story: current profile, versions as of a date, history, diff."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.application.errors import NotFoundError
from factledger.application.ledger.queries import Clock
from factledger.application.review_queue.queue import QueueCursor, QueueFilter
from factledger.domain.errors import ProfileVersionRewriteError
from factledger.domain.provenance import Actor, ActorKind, Origin
from factledger.domain.values import TextValue
from factledger.projections.follower import Follower, read_events
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.writes import put_version
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.projections.review_queue.reader import StoreReviewQueue
from factledger.testing.story.script import (
    CONDITION,
    JAN,
    JAN_REVIEW,
    JULY,
    JUNE_REVIEW,
    MARCH,
    MARCH_REVIEW,
    REVIEWER,
    TENANT,
)

DAY = timedelta(days=1)


def test_the_current_profile_shows_supplier_b_and_the_conditional_intent(projected) -> None:  # type: ignore[no-untyped-def]
    profile = projected.reader.current(TENANT, projected.ids.subject_id)
    assert profile.version == 5
    assert set(profile.fields) == {"supplier", "purchase_intent"}
    supplier = profile.fields["supplier"]
    assert supplier.value == TextValue("Supplier B")
    assert supplier.version == 3
    assert supplier.confirmed_by == Actor(ActorKind.STAFF, REVIEWER)
    assert supplier.evidence is not None
    assert supplier.evidence.session_id == "call-2026-03-03"
    intent = projected.reader.current(TENANT, projected.ids.subject_id).fields["purchase_intent"]
    assert intent.condition == CONDITION
    assert intent.origin is Origin.STATED
    assert intent.confirmed_by.kind is ActorKind.SUBJECT
    assert intent.confirmed_at == MARCH


def test_every_version_is_retrievable_as_of_its_date(projected) -> None:  # type: ignore[no-untyped-def]
    reader, sid = projected.reader, projected.ids.subject_id
    expected = [
        (JAN, 0, set()),
        (JAN_REVIEW + DAY, 1, {"supplier"}),
        (MARCH + timedelta(hours=1), 2, {"supplier", "purchase_intent"}),
        (MARCH_REVIEW + DAY, 3, {"supplier", "purchase_intent"}),
        (JUNE_REVIEW + DAY, 4, {"supplier", "purchase_intent", "complaints"}),
        (JULY + DAY, 5, {"supplier", "purchase_intent"}),
    ]
    for at, version, fields in expected:
        as_of = reader.as_of(TENANT, sid, at, Clock.KNOWN)
        assert (as_of.version, set(as_of.fields)) == (version, fields)
        assert reader.version(TENANT, sid, version) == as_of
    assert (
        reader.as_of(TENANT, sid, JAN_REVIEW + DAY, Clock.KNOWN).fields["supplier"].display
        == "Supplier A"
    )
    with pytest.raises(NotFoundError):
        reader.as_of(TENANT, sid, JAN - DAY, Clock.KNOWN)
    # On the said clock nothing had been said yet: an empty profile, not a missing one.
    assert reader.as_of(TENANT, sid, JAN - DAY).fields == {}


def test_the_supplier_history_shows_a_until_march_and_b_since(projected) -> None:  # type: ignore[no-untyped-def]
    history = projected.reader.history(TENANT, projected.ids.subject_id, "supplier")
    assert [(h.display, h.version, h.until_version) for h in history] == [
        ("Supplier A", 1, 3),
        ("Supplier B", 3, None),
    ]
    assert history[0].until == MARCH_REVIEW
    assert history[1].evidence is not None
    assert history[1].evidence.quote == "No, we moved to Supplier B last month."


def test_the_rejected_inference_never_appears(projected) -> None:  # type: ignore[no-untyped-def]
    reader, sid = projected.reader, projected.ids.subject_id
    assert all("insights" not in v.fields for v in reader.versions(TENANT, sid))
    assert reader.history(TENANT, sid, "insights") == []
    # what nobody decided stays in the queue: the January budget
    queue = ReviewQueueProjection(SqliteQueueStore(":memory:"))
    Follower(projected.ledger, [queue]).catch_up()
    pending = StoreReviewQueue(queue.store).page(TENANT, QueueFilter(), QueueCursor(), 50)
    assert [e.change.field for e in pending.entries] == ["budget"]


def test_forgetting_removes_the_value_and_history_records_it(projected) -> None:  # type: ignore[no-untyped-def]
    reader, sid = projected.reader, projected.ids.subject_id
    history = reader.history(TENANT, sid, "complaints")
    assert [(h.kind, h.forgotten, h.value) for h in history] == [
        ("append", True, None),
        ("forgotten", True, None),
    ]
    assert history[1].reason == "the lead asked"
    old = reader.version(TENANT, sid, 4).fields["complaints"]
    assert (old.forgotten, old.value, old.display) == (True, None, "[forgotten]")
    assert "arriving late" not in json.dumps(projected.projection.dump())


def test_a_diff_names_the_changed_and_added_fields(projected) -> None:  # type: ignore[no-untyped-def]
    diff = projected.reader.diff(TENANT, projected.ids.subject_id, 1, 3)
    assert [
        (d.field, d.before and d.before.display, d.after and d.after.display) for d in diff
    ] == [
        ("purchase_intent", None, "may consider switching to us next quarter (2026-Q2)"),
        ("supplier", "Supplier A", "Supplier B"),
    ]


def test_the_session_index_lists_sessions_in_order(projected) -> None:  # type: ignore[no-untyped-def]
    sessions = projected.reader.sessions(TENANT, projected.ids.subject_id)
    assert [(s.interaction_number, s.channel, s.message_count) for s in sessions] == [
        (1, "whatsapp", 4),
        (2, "voice", 4),
        (3, "chat", 2),
    ]


def test_another_tenant_sees_nothing(projected) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NotFoundError):
        projected.reader.current("globex", projected.ids.subject_id)
    assert projected.reader.subjects("globex") == []
    assert [s.external_ref for s in projected.reader.subjects(TENANT)] == ["lead-0042"]


def test_a_rebuilt_projection_equals_the_live_one(projected, store_factory) -> None:  # type: ignore[no-untyped-def]
    live = projected.projection.dump()
    replayed = projected.projection.rebuild(projected.ledger)
    assert replayed == projected.ledger.recorder.max_notification_id()
    assert projected.projection.dump() == live
    # A fresh store, fed in one big batch, ends up the same too.
    fresh = ProfileProjection(store_factory())
    fresh.process(read_events(projected.ledger, after=0, limit=10_000))
    assert fresh.dump() == live


@pytest.mark.parametrize("page", [1, 2, 3, 4, 7, 50])
def test_a_rebuild_equals_the_live_views_wherever_its_pages_end(projected, page) -> None:  # type: ignore[no-untyped-def]
    # Pages that end between a proposal and its decision, between a forget and the versions
    # it redacts, and one page for everything: each view transaction holds its page in memory.
    live = projected.projection.dump()
    replayed = projected.projection.rebuild(projected.ledger, page=page)
    assert replayed == projected.ledger.recorder.max_notification_id()
    assert projected.projection.dump() == live


def test_a_batch_seen_twice_changes_nothing(projected) -> None:  # type: ignore[no-untyped-def]
    before = projected.projection.dump()
    projected.projection.process(read_events(projected.ledger, after=0, limit=10_000))
    assert projected.projection.dump() == before
    assert projected.follower.lag() == {projected.projection.name: 0}


def test_a_written_version_cannot_be_rewritten(projected) -> None:  # type: ignore[no-untyped-def]
    sid = str(projected.ids.subject_id)
    with pytest.raises(ProfileVersionRewriteError), projected.projection.store.transaction() as txn:
        put_version(txn, sid, 1, "2026-01-13T09:00:00+00:00", {}, {})
    assert projected.reader.version(TENANT, projected.ids.subject_id, 1).fields
