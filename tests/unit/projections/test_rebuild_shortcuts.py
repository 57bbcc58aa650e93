"""The shortcuts a rebuild takes give what the long way gives: the cyclic collector and the
interpreter's switch interval set back after a rebuild changed them."""

from __future__ import annotations

import gc
import sys

import pytest

from factledger.projections.gc_easing import YOUNG_THRESHOLD, garbage_collection_eased
from factledger.projections.thread_switching import SWITCH_INTERVAL_S, quick_thread_switches


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


def test_the_switch_interval_is_set_back_when_the_last_quick_block_ends() -> None:
    before = sys.getswitchinterval()
    with quick_thread_switches():
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
        with quick_thread_switches():  # a second rebuild overlapping the first
            pass
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
    assert sys.getswitchinterval() == before


def test_the_switch_interval_is_set_back_when_a_rebuild_fails() -> None:
    before = sys.getswitchinterval()
    with pytest.raises(RuntimeError), quick_thread_switches():
        raise RuntimeError("a page failed")
    assert sys.getswitchinterval() == before


def test_a_shorter_interval_the_process_chose_is_kept() -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S / 2)
    try:
        with quick_thread_switches():
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S / 2)
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S / 2)
    finally:
        sys.setswitchinterval(before)
