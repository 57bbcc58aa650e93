"""The answer head's yes threshold is chosen out of fold so no blind reply turns a no into a yes."""

from __future__ import annotations

import numpy as np

from factledger.bench.judgement.train import YES_GRID, _yes_threshold

CENTRES = {"yes": (3.0, 0.0), "no": (0.0, 3.0), "neither": (-3.0, -3.0)}


def _replies(n: int = 20, seed: int = 3) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for label, centre in CENTRES.items():
        rows.append(rng.normal(centre, 0.3, size=(n, 2)))
        labels += [label] * n
    return np.vstack(rows).astype(np.float32), labels


def test_well_apart_replies_get_the_lowest_threshold_and_no_false_yes() -> None:
    x, labels = _replies()

    threshold, scores = _yes_threshold(x, labels, [True] * len(labels))

    assert threshold == float(YES_GRID[0])
    assert scores["blind_false_yes"] == 0.0
    assert scores["blind_yes_accepted"] == 1.0


def test_a_blind_no_that_reads_a_little_like_a_yes_raises_the_threshold() -> None:
    x, labels = _replies()
    # a reply labelled no, halfway to the yeses: read as a yes at a low threshold only
    x = np.vstack([x, np.array([[1.6, 1.4]], np.float32)])
    labels = [*labels, "no"]

    threshold, scores = _yes_threshold(x, labels, [True] * len(labels))

    assert threshold > float(YES_GRID[0])
    assert scores["blind_false_yes"] == 0.0
    assert scores["blind_yes_accepted"] >= 0.9
