"""Choosing what the tuned answer file ships from one or more training runs (seeds).

Every run is read at every epoch on the same kept-out pairs. The file holds each run's member
at one epoch, the epoch where the mean of their readings accepts the most kept-out yeses with
none of the other replies read as a yes; the threshold is that mean's. One worst kept-out pair
sets a single run's threshold, and which pair that is changes from epoch to epoch; the mean of
several runs reads those pairs more steadily (ADR 0105).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.tuned_answers_file import TunedAnswers, TunedMember
from factledger.bench.judgement.answers import LabelledPair, kept_out_scores


@dataclass(frozen=True, slots=True)
class Epoch:
    """One run's state after one epoch: its member and its reading of the kept-out pairs."""

    member: TunedMember
    kept_out: Matrix
    row: dict[str, object]


def choose(
    runs: Sequence[Sequence[Epoch]], held: Sequence[LabelledPair]
) -> tuple[TunedAnswers, dict[str, object]]:
    """The members of the best common epoch and the threshold of their mean reading."""
    epochs = min(len(run) for run in runs)
    if epochs == 0:
        raise ValueError("no epoch ran")
    scored = []
    for e in range(epochs):
        mean = np.mean([run[e].kept_out for run in runs], axis=0).astype(np.float32)
        scored.append(kept_out_scores(mean, held))
    best = max(range(epochs), key=lambda e: float(scored[e]["yes_accepted"]))  # type: ignore[arg-type]
    members = tuple(run[best].member for run in runs)
    tuned = TunedAnswers(members, float(scored[best]["yes_min"]))  # type: ignore[arg-type]
    # "point" counts the readings (one per epoch unless the recipe reads finer).
    return tuned, {
        "epoch": runs[0][best].row.get("epoch", best + 1),
        "point": best + 1,
        "by_epoch": scored,
    }
