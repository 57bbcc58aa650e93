"""Whether a candidate's changes on issue 28's judges are more than their cases' noise
(`python -m factledger.bench.evalsets.judges noise BASE CANDIDATE`).

A judge's figure is a sum over its cases, and the cases are a sample of what writers write:
another writer's hundred cases would move it by some amount before any candidate did. The
paired bootstrap measures that amount on the judge itself: its cases are drawn again with
replacement (the same draw for the base and the candidate, so that what a case costs both is
not counted as a change), `resamples` times, and a change is read against the changes those
draws give. A loss's p is the share of draws in which the candidate is at least as good as
its base; a small p says the loss holds whichever cases a writer had written.

Many losses are read at once (every judge, every figure), and among a hundred tests of
changes that cost nothing some p falls under 0.05 by chance: Holm's step-down keeps the
chance of flagging any loss that is noise at `alpha` over all of them. The pooled row draws
every judge's cases within the judge (a stratified draw) and is read alone, uncorrected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

RESAMPLES = 50_000
ALPHA = 0.05
SEED = 28  # issue 28's judges: one fixed draw, so that a report is read again as it was
_CHUNK = 5_000  # draws held in memory at once


@dataclass(frozen=True, slots=True)
class Figure:
    """A judge's figure: a count of a case tally's field, or a ratio of two."""

    name: str
    field: str
    over: str | None = None  # the ratio's denominator
    higher_is_better: bool = True


FIGURES: tuple[Figure, ...] = (
    Figure("facts found", "matched"),
    Figure("precision", "made_right", over="made"),
    Figure("updates", "updates_matched"),
    Figure("right notes", "hits"),
    Figure("stale notes", "stale", higher_is_better=False),
    Figure("forgets noticed", "forgets_noticed"),
    Figure("forgets misplaced", "forgets_misplaced", higher_is_better=False),
)
_FIELDS: tuple[str, ...] = tuple(
    dict.fromkeys(f for figure in FIGURES for f in (figure.field, figure.over) if f)
)


@dataclass(frozen=True, slots=True)
class PairedCases:
    """One judge's cases, scored by both runs: a row per case, a column per field."""

    base: np.ndarray
    candidate: np.ndarray


def paired_cases(
    base: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]]
) -> PairedCases:
    """Both runs' per-case counts of one judge (its halves in the scorer's order), case by case;
    refuses runs that did not score the same cases, or were scored without per-case counts."""
    if len(base) != len(candidate):
        raise ValueError(f"the runs scored {len(base)} and {len(candidate)} halves")
    rows_base: list[list[int]] = []
    rows_candidate: list[list[int]] = []
    for index, (b, c) in enumerate(zip(base, candidate, strict=True)):
        if "per_case" not in b or "per_case" not in c:
            raise ValueError(f"half {index} ({b.get('set')}) was scored without per-case counts")
        cases_b, cases_c = b["per_case"], c["per_case"]
        if set(cases_b) != set(cases_c):
            raise ValueError(f"half {index} ({b.get('set')}): the runs scored different cases")
        for key in sorted(cases_b):
            rows_base.append([int(cases_b[key][f]) for f in _FIELDS])
            rows_candidate.append([int(cases_c[key][f]) for f in _FIELDS])
    return PairedCases(
        np.array(rows_base, dtype=np.float64), np.array(rows_candidate, dtype=np.float64)
    )


def _value(figure: Figure, sums: np.ndarray) -> np.ndarray:
    """The figure from field sums (last axis in `_FIELDS` order)."""
    top = sums[..., _FIELDS.index(figure.field)]
    if figure.over is None:
        return top
    bottom = sums[..., _FIELDS.index(figure.over)]
    ratio: np.ndarray = np.divide(top, bottom, out=np.zeros_like(top), where=bottom > 0)
    return ratio


def _drawn_sums(
    cases: PairedCases, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Both runs' field sums over `resamples` draws of the judge's cases with replacement, the
    same draws for both: arrays `[resamples, field]`."""
    n = cases.base.shape[0]
    drawn_base, drawn_candidate = [], []
    for start in range(0, resamples, _CHUNK):
        times = rng.multinomial(n, np.full(n, 1.0 / n), size=min(_CHUNK, resamples - start))
        drawn_base.append(times @ cases.base)
        drawn_candidate.append(times @ cases.candidate)
    return np.concatenate(drawn_base), np.concatenate(drawn_candidate)


@dataclass(frozen=True, slots=True)
class Change:
    judge: str
    figure: Figure
    base: float
    candidate: float
    p_loss: float  # share of draws in which the candidate is at least as good as its base

    @property
    def change(self) -> float:
        return self.candidate - self.base


def changes(
    judge: str,
    base_sums: np.ndarray,
    candidate_sums: np.ndarray,
    observed: tuple[np.ndarray, np.ndarray],
) -> list[Change]:
    """Every figure's change on one judge (or a pool of them) and its p against the draws."""
    found = []
    for figure in FIGURES:
        drawn = _value(figure, candidate_sums) - _value(figure, base_sums)
        at_least_as_good = drawn >= 0 if figure.higher_is_better else drawn <= 0
        found.append(
            Change(
                judge,
                figure,
                float(_value(figure, observed[0])),
                float(_value(figure, observed[1])),
                float(np.mean(at_least_as_good)),
            )
        )
    return found


def is_loss(change: Change) -> bool:
    return change.change < 0 if change.figure.higher_is_better else change.change > 0


def holm(tested: Sequence[Change], alpha: float) -> list[Change]:
    """The losses Holm's step-down flags at family-wise `alpha` among every change tested
    (each a one-sided test of a loss; a change that is no loss is tested too, and counts in
    the family)."""
    ordered = sorted(tested, key=lambda c: c.p_loss)
    flagged = []
    for rank, change in enumerate(ordered):
        if change.p_loss >= alpha / (len(ordered) - rank):
            break
        if is_loss(change):
            flagged.append(change)
    return flagged


@dataclass(frozen=True, slots=True)
class Noise:
    per_judge: list[Change]
    pooled: list[Change]
    flagged: list[Change]  # per-judge losses beyond noise, Holm at `alpha`
    alpha: float
    resamples: int


def judge_noise(
    runs: Mapping[str, tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]],
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> Noise:
    """Every judge's changes (`runs`: the judge's base and candidate scorer output, by name)
    read against its own draws, and every judge pooled against stratified draws."""
    rng = np.random.default_rng(seed)
    per_judge: list[Change] = []
    drawn_base, drawn_candidate = (np.zeros((resamples, len(_FIELDS))) for _ in range(2))
    total_base, total_candidate = (np.zeros(len(_FIELDS)) for _ in range(2))
    for judge, (base, candidate) in runs.items():
        cases = paired_cases(base, candidate)
        judge_base, judge_candidate = _drawn_sums(cases, resamples, rng)
        observed = (cases.base.sum(axis=0), cases.candidate.sum(axis=0))
        per_judge.extend(changes(judge, judge_base, judge_candidate, observed))
        drawn_base += judge_base
        drawn_candidate += judge_candidate
        total_base += observed[0]
        total_candidate += observed[1]
    pooled = changes("pooled", drawn_base, drawn_candidate, (total_base, total_candidate))
    return Noise(per_judge, pooled, holm(per_judge, alpha), alpha, resamples)


def _cell(change: Change, flagged: bool) -> str:
    digits = 4 if change.figure.over is not None else 0  # a ratio's change, or a count's
    text = f"{change.change:+.{digits}f}"
    text = f"{text} ({change.p_loss:.4f})" if is_loss(change) else text
    return f"**{text}**" if flagged else text


def table(noise: Noise) -> str:
    """The changes judge by judge, a loss with its p, those flagged in bold; pooled last."""
    flagged = {(c.judge, c.figure.name) for c in noise.flagged}
    judges = list(dict.fromkeys(c.judge for c in noise.per_judge))
    lines = [
        "| judge | " + " | ".join(f.name for f in FIGURES) + " |",
        "| --- |" + " --- |" * len(FIGURES),
    ]
    for judge in [*judges, "pooled"]:
        row = (
            noise.pooled if judge == "pooled" else [c for c in noise.per_judge if c.judge == judge]
        )
        lines.append(
            f"| {judge} | "
            + " | ".join(_cell(c, (c.judge, c.figure.name) in flagged) for c in row)
            + " |"
        )
    tests = len(noise.per_judge)
    verdict = (
        "none"
        if not noise.flagged
        else "; ".join(f"{c.judge} {c.figure.name} (p {c.p_loss:.5f})" for c in noise.flagged)
    )
    lines += [
        "",
        f"A loss's p: the share of {noise.resamples:,} paired draws of the judge's cases in which "
        "the candidate is at least as good as its base. Losses beyond noise per judge (Holm, "
        f"family-wise {noise.alpha} over {tests} tests): {verdict}.",
    ]
    return "\n".join(lines) + "\n"
