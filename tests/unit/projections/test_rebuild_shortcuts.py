"""The shortcuts a rebuild takes give what the long way gives: a queue key's time from the
timestamp's ISO text, and the cyclic collector set back after a rebuild eased it."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta, timezone

import pytest

from factledger.projections.gc_easing import YOUNG_THRESHOLD, garbage_collection_eased
from factledger.projections.profile.shapes import key_time

TIMES = [
    datetime(2026, 12, 1, 12, 40, 28, 240677, tzinfo=UTC),
    datetime(2026, 12, 1, 12, 40, 28, tzinfo=UTC),  # no microseconds: ISO text is shorter
    datetime(2026, 1, 2, 3, 4, 5, 1, tzinfo=timezone.utc),  # noqa: UP017 - the same object
    datetime(2026, 1, 2, 23, 30, 0, 500, tzinfo=timezone(timedelta(hours=2))),
    datetime(2026, 1, 2, 0, 30, 0, 500, tzinfo=timezone(timedelta(hours=-5))),
    datetime(999, 3, 4, 5, 6, 7, 8, tzinfo=UTC),  # a year ISO pads and the key does not
]


@pytest.mark.parametrize("at", TIMES, ids=str)
def test_a_key_time_from_the_iso_text_is_the_formatted_one(at: datetime) -> None:
    assert key_time(at, at.isoformat()) == key_time(at)


def test_the_key_time_is_the_utc_time_without_separators() -> None:
    at = datetime(2026, 1, 2, 23, 30, 0, 500, tzinfo=timezone(timedelta(hours=2)))
    assert key_time(at, at.isoformat()) == "20260102T213000000500"
    assert key_time(TIMES[0], TIMES[0].isoformat()) == "20261201T124028240677"


def test_the_collector_is_set_back_when_the_last_eased_block_ends() -> None:
    before = gc.get_threshold()
    with garbage_collection_eased():
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0
        with garbage_collection_eased():  # a second rebuild overlapping the first
            pass
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_collector_is_set_back_when_a_rebuild_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), garbage_collection_eased():
        raise RuntimeError("a page failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
