"""The lab's count of right and stale notes at each floor for rows under the threshold reads
dev halves only (ADR 0150)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from factledger.bench.evalsets.under_floors import _floor, floors_of


def test_a_held_out_half_is_refused_before_its_cases_are_read(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="dev halves only"):
        asyncio.run(floors_of(tmp_path / "blind6" / "heldout", [None, 0.1]))


def test_off_is_no_floor_and_a_number_is_a_floor() -> None:
    assert _floor("off") is None
    assert _floor("None") is None
    assert _floor("0.1") == 0.1
