"""The whole story, end to end on the embedded default (SQLite ledger, SQLite views)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.settings import load_settings
from factledger.application.ledger.queries import Clock
from factledger.domain.events import ChangeRejected, FactForgotten
from factledger.domain.provenance import ActorKind, Origin
from factledger.projections.follower import read_events
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import (
    CONDITION,
    INTENT_QUOTE,
    JAN,
    JAN_REVIEW,
    JULY,
    JUNE_REVIEW,
    MARCH,
    MARCH_REVIEW,
    TENANT,
)
from factledger.testing.story.steps import StoryIds

HOUR = timedelta(hours=1)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Runtime, StoryIds]]:
    data_dir: Path = tmp_path_factory.mktemp("story")
    clock = ManualClock(JAN)
    with open_ledger_runtime(load_settings(data_dir=data_dir), clock=clock) as rt:
        ids = run_story(rt.ledger, clock, lambda _: rt.catch_up())
        rt.catch_up()
        yield rt, ids


def test_supplier_b_is_current_and_supplier_a_is_history(
    story: tuple[Runtime, StoryIds],
) -> None:
    rt, ids = story
    current = rt.profiles.current(TENANT, ids.subject_id)
    assert current.fields["supplier"].display == "Supplier B"
    history = rt.profiles.history(TENANT, ids.subject_id, "supplier")
    assert [(h.display, h.at, h.until) for h in history] == [
        ("Supplier A", JAN_REVIEW, MARCH_REVIEW),
        ("Supplier B", MARCH_REVIEW, None),
    ]


def test_the_conditional_intent_stays_stated_with_its_condition(
    story: tuple[Runtime, StoryIds],
) -> None:
    rt, ids = story
    intent = rt.profiles.current(TENANT, ids.subject_id).fields["purchase_intent"]
    assert intent.condition == CONDITION
    assert intent.origin is Origin.STATED
    assert intent.evidence is not None
    assert intent.evidence.quote == INTENT_QUOTE
    assert intent.confirmed_by.kind is ActorKind.SUBJECT  # the lead confirmed it in March
    assert "decided" not in intent.display  # never flattened into a decision


def test_the_rejected_inference_never_appears(story: tuple[Runtime, StoryIds]) -> None:
    rt, ids = story
    rejected = [e for e in read_events(rt.ledger, after=0) if isinstance(e.event, ChangeRejected)]
    assert [e.event.change_id for e in rejected] == [ids.changes["inference"]]
    for version in rt.profiles.versions(TENANT, ids.subject_id):
        assert "insights" not in version.fields
    assert rt.profiles.history(TENANT, ids.subject_id, "insights") == []


def test_every_version_is_retrievable_as_of_its_date(
    story: tuple[Runtime, StoryIds],
) -> None:
    rt, ids = story
    moments = [JAN, JAN_REVIEW, MARCH, MARCH_REVIEW, JUNE_REVIEW, JULY]
    versions = rt.profiles.versions(TENANT, ids.subject_id)
    assert [v.at for v in versions] == moments
    for version, moment in zip(versions, moments, strict=True):
        assert rt.profiles.as_of(TENANT, ids.subject_id, moment + HOUR, Clock.KNOWN) == version
    assert rt.profiles.as_of(TENANT, ids.subject_id, MARCH - HOUR, Clock.KNOWN).version == 1


def test_forgetting_removes_the_field_and_history_records_it(
    story: tuple[Runtime, StoryIds],
) -> None:
    rt, ids = story
    v4, v5 = (rt.profiles.version(TENANT, ids.subject_id, n) for n in (4, 5))
    assert "complaints" in v4.fields
    assert v4.fields["complaints"].forgotten
    assert "complaints" not in v5.fields
    assert v5.cause == "forgotten"
    entries = rt.profiles.history(TENANT, ids.subject_id, "complaints")
    assert entries[-1].kind == "forgotten"
    assert entries[-1].at == JULY
    assert "arriving late" not in json.dumps(rt.projection.dump())
    forgotten = [e for e in read_events(rt.ledger, after=0) if isinstance(e.event, FactForgotten)]
    assert [e.event.field for e in forgotten] == ["complaints"]


def test_the_rebuilt_views_equal_the_live_ones(story: tuple[Runtime, StoryIds]) -> None:
    rt, _ = story
    live = rt.projection.dump()
    rt.projection.rebuild(rt.ledger)
    assert rt.projection.dump() == live
