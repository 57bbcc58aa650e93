"""`python -m factledger.bench.judgement.qa_reader.held_floor --reader FILE --sha256 HEX
--floor F [--list-floor L] [--corpus DIR ...]`: an exported reader's held floor by ADR 0128's
rule, on the kept-out training cases (no blind set is read; ADR 0130).

ADR 0128 chose the shipped file's held floor (a single-valued field the subject already
holds, read from a bar of its own) on the blind dev halves. Once those halves are training
data (ADR 0130) they cannot choose it, so the same rule is applied to the kept-out cases: a
field is held in a session when an earlier session of its case has a labelled proposal of
it (the product's `held` is the fields proposed before); an update is a labelled span with
`updates:` set, recognised when a kept answer overlaps it. The grid is ADR 0128's {4.5, 3.5,
1.5, 0} under its 5.5 floor, taken under the file's own floor: floor - 1, - 2, - 4, and 0.
The held floor is the one that recognises most updates while line-level precision falls by
no more than 0.005 and recall does not fall (ties: the higher bar); none qualifying: unset.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.bench.judgement.conversations import load_training_cases
from factledger.bench.judgement.qa_reader.floor import DATA, read_sessions
from factledger.bench.judgement.qa_reader.pairs import kept_out
from factledger.bench.judgement.qa_reader.scoring import GoldSpan, Read, score_spans
from factledger.bench.judgement.qa_reader.sessions import Session

BELOW_THE_FLOOR = (1.0, 2.0, 4.0)  # 5.5 - {4.5, 3.5, 1.5}; and 0 itself
PRECISION_GIVEN = 0.005


@dataclass(frozen=True, slots=True)
class HeldCases:
    sessions: list[Session]
    gold: list[GoldSpan]
    updates: list[GoldSpan]
    held: Mapping[tuple[str, int], frozenset[str]]  # (case, session) -> fields held there


def held_cases(corpora: Sequence[Path]) -> HeldCases:
    sessions: list[Session] = []
    gold: list[GoldSpan] = []
    updates: list[GoldSpan] = []
    held: dict[tuple[str, int], frozenset[str]] = {}
    for case in load_training_cases(corpora).cases:
        if not kept_out(case.id):
            continue
        lists = {f: case.is_list(f) for f in case.fields}
        before: set[str] = set()
        for n, s in enumerate(case.sessions):
            sessions.append(Session(case.id, n, s.lines, tuple(case.fields), lists))
            held[(case.id, n)] = frozenset(before)
            for p in s.proposals:
                span = GoldSpan(case.id, n, p.span.line, str(p.span.field),
                                p.span.start, p.span.start + len(p.span.text))  # fmt: skip
                gold.append(span)
                if p.updates is not None:
                    updates.append(span)
            before.update(str(p.span.field) for p in s.proposals)
    return HeldCases(sessions, gold, updates, held)


def kept(
    reads: Sequence[Read],
    cases: HeldCases,
    lists: Mapping[tuple[str, str], bool],
    floors: tuple[float, float, float],
) -> list[Read]:
    """The answers kept at (floor, list floor, held floor): a held single-valued field's from
    the held floor, a list field's from the list floor, any other's from the floor."""
    floor, list_floor, held_floor = floors

    def bar(r: Read) -> float:
        if lists.get((r.case_id, r.field), False):
            return list_floor
        return held_floor if r.field in cases.held[(r.case_id, r.session)] else floor

    return [r for r in reads if r.margin >= bar(r)]


def held_grid(floor: float) -> tuple[float, ...]:
    return tuple(sorted({max(0.0, floor - d) for d in BELOW_THE_FLOOR} | {0.0}, reverse=True))


def choose_held(figures: Mapping[float, Mapping[str, float | int]], floor: float) -> float | None:
    """ADR 0128's rule: most updates recognised, precision down no more than 0.005, recall
    not down, against the floor alone; the higher bar on a tie; None if none qualifies."""
    base = figures[floor]
    qualifying = [
        h
        for h in figures
        if h != floor
        and float(figures[h]["precision"]) >= float(base["precision"]) - PRECISION_GIVEN
        and float(figures[h]["recall"]) >= float(base["recall"])
        and float(figures[h]["updates"]) > float(base["updates"])
    ]
    if not qualifying:
        return None
    return max(qualifying, key=lambda h: (float(figures[h]["updates"]), h))


def held_figures(
    path: Path, sha256: str | None, corpora: Sequence[Path], floor: float, list_floor: float
) -> dict[str, object]:
    cases = held_cases(corpora)
    reader = QaFieldReader.load(path, sha256, 0.0)
    reads = read_sessions(reader, cases.sessions)
    lists = {(s.case_id, f): many for s in cases.sessions for f, many in s.lists.items()}
    figures: dict[float, dict[str, float | int]] = {}
    for h in (floor, *held_grid(floor)):
        answers = kept(reads, cases, lists, (floor, list_floor, h))
        figures[h] = {
            **score_spans(answers, cases.gold),
            "updates": score_spans(answers, cases.updates)["recall"],
            "updates_of": len(cases.updates),
        }
    return {
        "reader": path.name,
        "floor": floor,
        "list_floor": list_floor,
        "held_floor": choose_held(figures, floor),
        "kept_out line level by held floor": {str(h): v for h, v in figures.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factledger.bench.judgement.qa_reader.held_floor"
    )
    parser.add_argument("--reader", type=Path, required=True)
    parser.add_argument("--sha256", default=None)
    parser.add_argument("--floor", type=float, required=True)
    parser.add_argument("--list-floor", type=float, default=None, help="default: the floor")
    parser.add_argument("--corpus", type=Path, action="append")
    args = parser.parse_args(argv)
    list_floor = args.floor if args.list_floor is None else args.list_floor
    result = held_figures(args.reader, args.sha256, args.corpus or [DATA], args.floor, list_floor)
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
