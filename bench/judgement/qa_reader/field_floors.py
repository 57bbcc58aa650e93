"""`python -m factledger.bench.judgement.qa_reader.field_floors --out FILE [--corpus DIR ...]`:
the QA reader's floor per field, by ADR 0152's rule, on the kept-out training cases.

The kept-out cases (one case in eight by a hash of its id, never trained on) are read once
through the product's adapter at a margin under every floor of the grid, at ADR 0107's line
level (each single-valued field's best answer per line, a list field's every answer; right
when it overlaps a labelled span of the same field and line). Then, per kind of field (single
or list, base floor b):

- the target is the kind's pooled precision at b (each field is held to what the whole reads);
- a field's precision at a floor x is shrunk towards the kind's there:
  (right + K * pooled) / (made + K), K = 20, so that a field with few answers stays near the
  pooled figure (the guard against fitting noise);
- a field with at least 15 labelled spans gets the lowest x of b - 3, ..., b + 3 (steps of 0.5)
  whose shrunk precision reaches the target (none: b + 3); any other keeps b.

Before the floors are trusted, the kept-out cases are split in two by another hash of the
case id; floors fitted on each half, applied to the other, must read there a recall at least
the base floors' and a precision no more than 0.010 under it. No blind set is read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_FLOOR,
    PACKAGED_QA_READER_LIST_FLOOR,
    PACKAGED_QA_READER_SHA256,
    QaFieldReader,
)
from factledger.bench.judgement.qa_reader.floor import DATA, read_sessions
from factledger.bench.judgement.qa_reader.scoring import GoldKeywords, GoldSpan, Read
from factledger.bench.judgement.qa_reader.sessions import blind_sessions, kept_out_sessions

READ_FROM = -4.0  # under every floor the grid can reach
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


def fit(
    marked: Sequence[Marked], labelled: Sequence[Labelled], rule: FitRule
) -> dict[tuple[str, bool], float]:
    """Each well-supported field's own floor by the rule (fields keeping their kind's floor
    are left out)."""
    support: dict[tuple[str, bool], int] = defaultdict(int)
    for g in labelled:
        support[(g.field, g.is_list)] += 1
    by_field: dict[tuple[str, bool], list[Marked]] = defaultdict(list)
    for m in marked:
        by_field[(m.field, m.is_list)].append(m)
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


def split_check(
    marked: Sequence[Marked], labelled: Sequence[Labelled], rule: FitRule
) -> dict[str, object]:
    """Floors fitted on each half of the cases, read on the other, beside the base floors."""
    out: dict[str, object] = {}
    passed = True
    for fit_half in (0, 1):
        fit_m = [m for m in marked if half_of(m.case_id) == fit_half]
        fit_g = [g for g in labelled if half_of(g.case_id) == fit_half]
        test_m = [m for m in marked if half_of(m.case_id) != fit_half]
        test_g = [g for g in labelled if half_of(g.case_id) != fit_half]
        fitted = fit(fit_m, fit_g, rule)
        base, own = figures(test_m, test_g, {}, rule), figures(test_m, test_g, fitted, rule)
        ok = (
            float(own["recall"]) >= float(base["recall"])
            and float(own["precision"]) >= float(base["precision"]) - SPLIT_PRECISION_GIVEN
        )
        passed = passed and ok
        out[f"fitted on half {fit_half}"] = {"base": base, "own floors": own, "holds": ok}
    out["passed"] = passed
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


def read_kept_out(
    reader: QaFieldReader, corpora: Sequence[Path], cache: Path | None = None
) -> tuple[list[Marked], list[Labelled]]:
    """The kept-out cases' answers and labelled spans, marked; with `cache`, the reads are
    written there on the first run and read back from it after (the reading is the cost)."""
    if cache is not None and cache.exists():
        data = json.loads(cache.read_text())
    else:
        sessions, gold = kept_out_sessions(corpora)
        data = {
            "sessions": [{"case_id": s.case_id, "lists": s.lists} for s in sessions],
            "reads": [asdict(r) for r in read_sessions(reader, sessions)],
            "gold": [asdict(g) for g in gold],
        }
        if cache is not None:
            cache.write_text(json.dumps(data))
    kinds: dict[tuple[str, str], bool] = {
        (s["case_id"], name): many for s in data["sessions"] for name, many in s["lists"].items()
    }
    return mark(
        [Read(**r) for r in data["reads"]],
        [GoldSpan(**g) for g in data["gold"]],
        lambda x: kinds.get((x.case_id, x.field), False),
    )


def mark_blind(reads: Sequence[Read], gold: Sequence[GoldKeywords], lists: Mapping[str, bool]
               ) -> list[Marked]:  # fmt: skip
    """A blind dev half's answers at the line level, right when they hold every keyword of an
    expected proposal of their session and field (the scorer's test, without its one-to-one
    pairing and its numbers in words)."""
    expected: dict[tuple[str, int, str], list[tuple[str, ...]]] = defaultdict(list)
    for g in gold:
        expected[(g.case_id, g.session, g.field)].append(g.keywords)
    return [
        Marked(
            r.case_id,
            r.field,
            lists.get(r.field, False),
            r.margin,
            any(
                all(k.lower() in r.value.lower() for k in keywords)
                for keywords in expected[(r.case_id, r.session, r.field)]
            ),
        )
        for r in reads
    ]


def read_blind(reader: QaFieldReader, directories: Sequence[Path]) -> list[Marked]:
    """The dev halves' answers, marked (a held-out half is refused: it is never read)."""
    marked: list[Marked] = []
    for directory in directories:
        if "heldout" in directory.parts:
            raise SystemExit(f"{directory}: a held-out half is never read")
        sessions, gold = blind_sessions(directory)
        lists = {name: many for s in sessions for name, many in s.lists.items()}
        marked += mark_blind(read_sessions(reader, sessions), gold, lists)
    return marked


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factledger.bench.judgement.qa_reader.field_floors"
    )
    parser.add_argument("--reader", type=Path, default=PACKAGED_QA_READER)
    parser.add_argument("--sha256", default=None, help="the file's pin (default: the packaged)")
    parser.add_argument("--floor", type=float, default=PACKAGED_QA_READER_FLOOR)
    parser.add_argument("--list-floor", type=float, default=PACKAGED_QA_READER_LIST_FLOOR)
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--out", type=Path, required=True, help="the field floors file to write")
    parser.add_argument("--cache", type=Path, help="the kept-out reads, written once, then read")
    parser.add_argument(
        "--bands-on",
        type=Path,
        action="append",
        help="a blind set's dev half: print what each own floor adds or takes away there",
    )
    args = parser.parse_args(argv)
    sha256 = args.sha256 or (
        PACKAGED_QA_READER_SHA256 if args.reader == PACKAGED_QA_READER else None
    )
    if sha256 is None:
        parser.error("--sha256: a reader file of one's own needs its pin")
    rule = FitRule(floor=args.floor, list_floor=args.list_floor)
    reader = QaFieldReader.load(args.reader, sha256, READ_FROM)
    marked, labelled = read_kept_out(reader, args.corpus or [DATA], args.cache)
    floors = fit(marked, labelled, rule)
    args.out.write_text(json.dumps(file_body(floors, sha256), indent=1) + "\n")
    result = {
        "reader": args.reader.name,
        "answers": len(marked),
        "labelled spans": len(labelled),
        "base floors": figures(marked, labelled, {}, rule),
        "own floors": figures(marked, labelled, floors, rule),
        "split check": split_check(marked, labelled, rule),
        "fields": per_field(marked, labelled, rule, floors),
    }
    if args.bands_on:
        result["bands"] = bands(marked, read_blind(reader, args.bands_on), floors, rule)
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
