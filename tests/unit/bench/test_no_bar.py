"""The lab's bar on the answer judge's no (issue 29): fitted as the yes bar is, above every pair
that is not a no and reads as one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.bench.judgement.no_bar import dev_pairs, figures, no_bar, reads_no

# yes, no, neither
P = np.array(
    [
        [0.10, 0.85, 0.05],  # a no, sure
        [0.30, 0.40, 0.30],  # a yes read as an unsure no
        [0.05, 0.60, 0.35],  # a neither read as a no
        [0.70, 0.20, 0.10],  # a yes read as a yes
        [0.20, 0.30, 0.50],  # a no read as neither
    ],
    dtype=np.float32,
)
LABELS = ["no", "yes", "neither", "yes", "no"]


def test_a_no_is_read_only_where_yes_is_not_the_likeliest_and_no_beats_neither() -> None:
    assert reads_no(P).tolist() == [True, True, True, False, False]
    assert reads_no(P, 0.7).tolist() == [True, False, False, False, False]


def test_the_bar_lies_just_above_the_surest_false_decline() -> None:
    assert no_bar(P, LABELS) == pytest.approx(0.601)
    assert figures(P, LABELS, 0.0) == {
        "nos": 2,
        "nos_declined": 1,
        "not_nos": 3,
        "false_declines": 2,
        "yeses_declined": 1,
    }
    assert figures(P, LABELS, 0.601)["false_declines"] == 0


def test_a_held_out_half_is_refused() -> None:
    with pytest.raises(SystemExit, match="held-out"):
        dev_pairs(Path("bench/evalsets/blind2/heldout"))
