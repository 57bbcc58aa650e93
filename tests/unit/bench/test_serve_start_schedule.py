"""The start bench splits the main thread's wall time to ready into running, waiting for a
core and blocked, so that a slow start can be told from a busy machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from factledger.bench.serve_start import Start, _main_thread_schedule, schedule_summary


def test_blocked_is_what_the_main_thread_neither_ran_nor_queued_for() -> None:
    assert Start(3.0, 2.2, main_ran_s=1.5, main_queued_s=1.2).main_blocked_s == pytest.approx(0.3)
    assert Start(1.0, 0.9, main_ran_s=0.8, main_queued_s=0.4).main_blocked_s == 0.0
    assert Start(1.0, None).main_blocked_s is None


def test_the_summary_is_the_medians_of_the_starts_after_the_first() -> None:
    starts = [
        Start(9.0, 5.0, 5.0, 3.0),  # the first start fills the graph cache: left out
        Start(3.0, 1.5, 1.4, 1.2),
        Start(2.0, 1.3, 1.2, 0.6),
        Start(4.0, 1.6, 1.5, 2.3),
    ]
    assert schedule_summary(starts) == "1.40 / 1.20 / 0.20"
    assert schedule_summary([Start(1.0, None)]) == "-"


@pytest.mark.skipif(not Path("/proc/self/schedstat").exists(), reason="Linux schedstat only")
def test_a_live_process_main_thread_has_run() -> None:
    ran, queued = _main_thread_schedule(os.getpid())
    assert ran is not None
    assert ran > 0
    assert queued is not None
    assert queued >= 0
