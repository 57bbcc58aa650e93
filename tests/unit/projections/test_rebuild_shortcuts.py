"""The shortcuts a rebuild takes give what the long way gives: the cyclic collector set back
after a rebuild changed it."""

from __future__ import annotations

import gc

import pytest

from factledger.projections.gc_easing import YOUNG_THRESHOLD, garbage_collection_eased


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
