"""ADR 0152's fitting rule for the QA reader's floor per field, on marked answers (no model,
no files: the rule is unit-tested here; `field_floors` reads the cases and writes the file).

Per kind of field (single or list, base floor b): the target is the kind's pooled line-level
precision at b; a field's precision at a floor x is shrunk towards the kind's there,
(right + K * pooled) / (made + K) with K = 20; a field with at least 15 labelled spans gets
the lowest x of b - 3, ..., b + 3 (steps of 0.5) whose shrunk precision reaches the target
(none: b + 3); any other keeps b. The split-half check fits on half the cases (by another
hash of the id than the kept-out split's) and reads the other half.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER_FLOOR,
    PACKAGED_QA_READER_LIST_FLOOR,
)
from factledger.bench.evalsets.score import holds_all
from factledger.bench.judgement.qa_reader.scoring import GoldKeywords, GoldSpan, Read

SPLIT_PRECISION_GIVEN = 0.010


@dataclass(frozen=True, slots=True)
class FitRule:
    """ADR 0152's numbers, written before anything was fitted."""

    floor: float = PACKAGED_QA_READER_FLOOR
    list_floor: float = PACKAGED_QA_READER_LIST_FLOOR
    shrink: float = 20.0  # K: pseudo-answers at the kind's pooled precision
    support: int = 15  # labelled spans a field needs for a floor of its own
    reach: float = 3.0  # how far from its kind's floor a field's may go
    step: float = 0.5

    def base(self, *, is_list: bool) -> float:
        return self.list_floor if is_list else self.floor

    def grid(self, *, is_list: bool) -> list[float]:
        b, n = self.base(is_list=is_list), round(self.reach / self.step)
        return [b + i * self.step for i in range(-n, n + 1)]


@dataclass(frozen=True, slots=True)
class Marked:
    """An answer at the line level: its field, kind and margin, and whether it is right."""

    case_id: str
    field: str
    is_list: bool
    margin: float
    right: bool


@dataclass(frozen=True, slots=True)
class Labelled:
    """A labelled span: the highest margin of an answer overlapping it (None: no answer)."""

    case_id: str
    field: str
    is_list: bool
    best: float | None


def mark(reads: Sequence[Read], gold: Sequence[GoldSpan], lists: Callable[[Read | GoldSpan], bool]
         ) -> tuple[list[Marked], list[Labelled]]:  # fmt: skip
    """Each answer marked right or wrong, each labelled span with its best overlapping answer."""
    by_pair: dict[tuple[str, int, int, str], list[GoldSpan]] = defaultdict(list)
    for g in gold:
        by_pair[(g.case_id, g.session, g.line, g.field)].append(g)
    best: dict[GoldSpan, float] = {}
    marked = []
    for r in reads:
        hits = [
            g for g in by_pair[(r.case_id, r.session, r.line, r.field)]
            if r.start < g.end and g.start < r.end
        ]  # fmt: skip
        for g in hits:
            best[g] = max(best.get(g, r.margin), r.margin)
        marked.append(Marked(r.case_id, r.field, lists(r), r.margin, bool(hits)))
    labelled = [Labelled(g.case_id, g.field, lists(g), best.get(g)) for g in gold]
    return marked, labelled


Floors = Mapping[tuple[str, bool], float]  # (field, is_list) -> its own floor


def floor_of(floors: Floors, rule: FitRule, field: str, *, is_list: bool) -> float:
    return floors.get((field, is_list), rule.base(is_list=is_list))


def figures(
    marked: Iterable[Marked], labelled: Iterable[Labelled], floors: Floors, rule: FitRule
) -> dict[str, float | int]:
    """Line-level precision and recall with each field at its floor."""
    kept = [m for m in marked if m.margin >= floor_of(floors, rule, m.field, is_list=m.is_list)]
    gold = list(labelled)
    found = sum(
        g.best is not None and g.best >= floor_of(floors, rule, g.field, is_list=g.is_list)
        for g in gold
    )
    right = sum(m.right for m in kept)
    return {
        "precision": round(right / len(kept), 4) if kept else 0.0,
        "recall": round(found / len(gold), 4) if gold else 0.0,
        "made": len(kept),
        "right": right,
        "labelled": len(gold),
        "found": found,
    }


def _precision(answers: Sequence[Marked], x: float) -> tuple[int, int]:
    kept = [m for m in answers if m.margin >= x]
    return sum(m.right for m in kept), len(kept)


def _supported(
    marked: Sequence[Marked], labelled: Sequence[Labelled]
) -> tuple[dict[tuple[str, bool], int], dict[tuple[str, bool], list[Marked]]]:
    """Per (field, is_list): how many labelled spans it has, and its answers."""
    support: dict[tuple[str, bool], int] = defaultdict(int)
    for g in labelled:
        support[(g.field, g.is_list)] += 1
    by_field: dict[tuple[str, bool], list[Marked]] = defaultdict(list)
    for m in marked:
        by_field[(m.field, m.is_list)].append(m)
    return support, by_field


def fit(
    marked: Sequence[Marked], labelled: Sequence[Labelled], rule: FitRule
) -> dict[tuple[str, bool], float]:
    """Each well-supported field's own floor by the rule (fields keeping their kind's floor
    are left out)."""
    support, by_field = _supported(marked, labelled)
    floors: dict[tuple[str, bool], float] = {}
    for is_list in (False, True):
        pool = [m for m in marked if m.is_list == is_list]
        right, made = _precision(pool, rule.base(is_list=is_list))
        if not made:
            continue
        target = right / made
        pooled = {}
        for x in rule.grid(is_list=is_list):
            r, n = _precision(pool, x)
            pooled[x] = r / n if n else target
        for key, answers in sorted(by_field.items()):
            if key[1] == is_list and support[key] >= rule.support:
                floors[key] = _lowest_reaching(answers, pooled, target, rule)
    return floors


def _lowest_reaching(
    answers: Sequence[Marked], pooled: Mapping[float, float], target: float, rule: FitRule
) -> float:
    """The lowest floor of the grid whose shrunk precision reaches `target` (none: the top)."""
    for x in pooled:
        right, made = _precision(answers, x)
        if (right + rule.shrink * pooled[x]) / (made + rule.shrink) >= target:
            return x
    return max(pooled)


def half_of(case_id: str) -> int:
    """Another hash than the kept-out split's (which puts every kept-out id at 0 mod 8)."""
    return hashlib.sha256(case_id.encode("utf-8")).digest()[0] % 2


Fitter = Callable[[Sequence[Marked], Sequence[Labelled], FitRule], Floors]


def split_check(
    marked: Sequence[Marked],
    labelled: Sequence[Labelled],
    rule: FitRule,
    fitter: Fitter | None = None,
) -> dict[str, object]:
    """Floors fitted (by `fitter`, ADR 0152's `fit` by default) on each half of the cases,
    read on the other, beside the base floors."""
    fitter = fitter or fit
    out: dict[str, object] = {}
    passed = True
    for fit_half in (0, 1):
        fit_m = [m for m in marked if half_of(m.case_id) == fit_half]
        fit_g = [g for g in labelled if half_of(g.case_id) == fit_half]
        test_m = [m for m in marked if half_of(m.case_id) != fit_half]
        test_g = [g for g in labelled if half_of(g.case_id) != fit_half]
        fitted = fitter(fit_m, fit_g, rule)
        base, own = figures(test_m, test_g, {}, rule), figures(test_m, test_g, fitted, rule)
        ok = (
            float(own["recall"]) >= float(base["recall"])
            and float(own["precision"]) >= float(base["precision"]) - SPLIT_PRECISION_GIVEN
        )
        passed = passed and ok
        out[f"fitted on half {fit_half}"] = {"base": base, "own floors": own, "holds": ok}
    out["passed"] = passed
    return out


def writer_check(
    marked: Sequence[Marked],
    labelled: Sequence[Labelled],
    rule: FitRule,
    writer_of: Callable[[str], str],
    fitter: Fitter | None = None,
) -> dict[str, object]:
    """Leave one writer out: floors fitted on every other writer's kept-out cases, read on
    that writer's, beside the base floors; and the counts summed over the writers. Unlike
    the split-half check, it asks whether the fit carries over to a writer it never read."""
    fitter = fitter or fit
    out: dict[str, object] = {}
    summed = {"base": [0, 0, 0, 0], "own floors": [0, 0, 0, 0]}  # right, made, found, spans
    for writer in sorted({writer_of(m.case_id) for m in marked}):
        fitted = fitter(
            [m for m in marked if writer_of(m.case_id) != writer],
            [g for g in labelled if writer_of(g.case_id) != writer],
            rule,
        )
        test_m = [m for m in marked if writer_of(m.case_id) == writer]
        test_g = [g for g in labelled if writer_of(g.case_id) == writer]
        row = {"base": figures(test_m, test_g, {}, rule)}
        row["own floors"] = figures(test_m, test_g, fitted, rule)
        for name, f in row.items():
            for i, key in enumerate(("right", "made", "found", "labelled")):
                summed[name][i] += int(f[key])
        out[writer] = row
    for name, (right, made, found, spans) in summed.items():
        out[f"all writers, {name}"] = {
            "precision": round(right / made, 4) if made else 0.0,
            "recall": round(found / spans, 4) if spans else 0.0,
            "made": made,
            "found": found,
        }
    return out


def per_field(marked: Sequence[Marked], labelled: Sequence[Labelled], rule: FitRule,
              floors: Floors) -> dict[str, dict[str, object]]:  # fmt: skip
    """Each field's support and figures at its kind's floor and at its own."""
    keys = sorted({(g.field, g.is_list) for g in labelled} | {(m.field, m.is_list) for m in marked})
    out: dict[str, dict[str, object]] = {}
    for field, is_list in keys:
        ms = [m for m in marked if (m.field, m.is_list) == (field, is_list)]
        gs = [g for g in labelled if (g.field, g.is_list) == (field, is_list)]
        own = {k: v for k, v in floors.items() if k == (field, is_list)}
        out[f"{field}{' (list)' if is_list else ''}"] = {
            "floor": floor_of(floors, rule, field, is_list=is_list),
            "at the base": figures(ms, gs, {}, rule),
            "at its floor": figures(ms, gs, own, rule),
        }
    return out


def file_body(floors: Floors, reader_sha256: str) -> dict[str, object]:
    return {
        "reader_sha256": reader_sha256,
        "single": {f: x for (f, is_list), x in sorted(floors.items()) if not is_list},
        "lists": {f: x for (f, is_list), x in sorted(floors.items()) if is_list},
    }


def mark_blind(reads: Sequence[Read], gold: Sequence[GoldKeywords], lists: Mapping[str, bool]
               ) -> list[Marked]:  # fmt: skip
    """A blind dev half's answers at the line level, right when they hold every keyword of an
    expected proposal of their session and field (the scorer's reading of keywords, numbers
    in words and one spelling of a word included, without its one-to-one pairing)."""
    expected: dict[tuple[str, int, str], list[tuple[str, ...]]] = defaultdict(list)
    for g in gold:
        expected[(g.case_id, g.session, g.field)].append(g.keywords)
    return [
        Marked(
            r.case_id,
            r.field,
            lists.get(r.field, False),
            r.margin,
            any(holds_all(r.value, k) for k in expected[(r.case_id, r.session, r.field)]),
        )
        for r in reads
    ]


def label_blind(reads: Sequence[Read], gold: Sequence[GoldKeywords], lists: Mapping[str, bool]
                ) -> list[Labelled]:  # fmt: skip
    """A blind dev half's expected proposals, each with the highest margin of an answer of its
    session and field that holds every one of its keywords (None: no answer does), as
    `mark_blind` marks that answer right."""
    by_key: dict[tuple[str, int, str], list[Read]] = defaultdict(list)
    for r in reads:
        by_key[(r.case_id, r.session, r.field)].append(r)
    out = []
    for g in gold:
        key = (g.case_id, g.session, g.field)
        best = max((r.margin for r in by_key[key] if holds_all(r.value, g.keywords)), default=None)
        out.append(Labelled(g.case_id, g.field, lists.get(g.field, False), best))
    return out


def fit_marginal(
    marked: Sequence[Marked], labelled: Sequence[Labelled], rule: FitRule, tau: float
) -> dict[tuple[str, bool], float]:
    """ADR 0229: each well-supported field's floor of the grid where the answers it keeps
    gain most, each right answer counting 1 - `tau` and each wrong one -`tau`; so a band of
    margins is kept where its own precision beats `tau`, whatever the field's average.
    Among floors that gain alike, the nearest its kind's."""
    support, by_field = _supported(marked, labelled)
    floors: dict[tuple[str, bool], float] = {}
    for key, answers in sorted(by_field.items()):
        if support[key] < rule.support:
            continue
        base = rule.base(is_list=key[1])

        def gain(x: float, answers: Sequence[Marked] = answers) -> float:
            kept = [m for m in answers if m.margin >= x]
            return round(sum(m.right for m in kept) - tau * len(kept), 6)

        floors[key] = max(rule.grid(is_list=key[1]), key=lambda x: (gain(x), -abs(x - base)))
    return floors


def _band(answers: Sequence[Marked], key: tuple[str, bool], low: float, high: float) -> str:
    inside = [m for m in answers if (m.field, m.is_list) == key and low <= m.margin < high]
    return f"{sum(m.right for m in inside)}/{len(inside)}"


def bands(kept: Sequence[Marked], dev: Sequence[Marked], floors: Floors, rule: FitRule
          ) -> dict[str, dict[str, object]]:  # fmt: skip
    """For each field with a floor of its own, the answers between it and its kind's floor
    (what the own floor adds or takes away) and how many are right, on the kept-out cases
    and on the dev halves: whether the fit carries over to writers it never read."""
    out: dict[str, dict[str, object]] = {}
    for (field, is_list), own in sorted(floors.items()):
        base = rule.base(is_list=is_list)
        low, high = sorted((own, base))
        out[f"{field}{' (list)' if is_list else ''}"] = {
            "own floor": own,
            "adds" if own < base else "takes away": {
                "kept-out right/answers": _band(kept, (field, is_list), low, high),
                "dev right/answers": _band(dev, (field, is_list), low, high),
            },
        }
    return out
