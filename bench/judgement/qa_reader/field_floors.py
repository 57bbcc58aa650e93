"""`python -m factledger.bench.judgement.qa_reader.field_floors --out FILE [--corpus DIR ...]
[--fit-on DIR ... --marginal TAU]`: the QA reader's floor per field, by ADR 0152's rule
(`field_floor_fit`) on the kept-out training cases or, with `--fit-on`, on blind sets' dev
halves; with `--marginal`, by ADR 0229's rule (the answers each floor keeps, each band by
its own precision).

The kept-out cases (one case in eight by a hash of its id, never trained on) are read once
through the product's adapter at a margin under every floor of the grid, at ADR 0107's line
level (each single-valued field's best answer per line, a list field's every answer; right
when it overlaps a labelled span of the same field and line); the floors are fitted on them,
checked half against half, and written with the reader's SHA-256. `--bands-on DIR` also reads
a blind set's dev half (never a held-out one) and prints what each own floor adds or takes
away there. With `--fit-on` the fit reads the dev halves given instead (an answer right when
it holds every keyword of an expected proposal of its session and field, by the scorer's
reading; each expected proposal found at its best such answer's margin) and the one-writer-
out check leaves one set out. No held-out half is read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_FLOOR,
    PACKAGED_QA_READER_LIST_FLOOR,
    PACKAGED_QA_READER_SHA256,
    PACKAGED_QA_READER_SPAN_SLACK,
    QaFieldReader,
)
from factledger.bench.judgement.conversations import read_cases_file
from factledger.bench.judgement.qa_reader.field_floor_fit import (
    FitRule,
    Floors,
    Labelled,
    Marked,
    bands,
    figures,
    file_body,
    fit,
    fit_marginal,
    label_blind,
    mark,
    mark_blind,
    per_field,
    split_check,
    writer_check,
)
from factledger.bench.judgement.qa_reader.floor import DATA, read_sessions
from factledger.bench.judgement.qa_reader.scoring import GoldSpan, Read
from factledger.bench.judgement.qa_reader.sessions import blind_sessions, kept_out_sessions

READ_FROM = -4.0  # under every floor the grid can reach


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


def read_blind(
    reader: QaFieldReader, directories: Sequence[Path]
) -> tuple[list[Marked], list[Labelled]]:
    """The dev halves' answers, marked, and their expected proposals, each with its best
    answer (a held-out half is refused: it is never read)."""
    marked: list[Marked] = []
    labelled: list[Labelled] = []
    for directory in directories:
        if "heldout" in directory.parts:
            raise SystemExit(f"{directory}: a held-out half is never read")
        sessions, gold = blind_sessions(directory)
        lists = {name: many for s in sessions for name, many in s.lists.items()}
        reads = read_sessions(reader, sessions)
        marked += mark_blind(reads, gold, lists)
        labelled += label_blind(reads, gold, lists)
    return marked, labelled


def writers(corpora: Sequence[Path]) -> dict[str, str]:
    """Each case's writer: the prefix of a converted blind case's id (its set's writer), else
    the folder its file lies in (the corpus keeps one folder per writer)."""
    out: dict[str, str] = {}
    for directory in corpora:
        for path in sorted(directory.rglob("cases-*.yaml")):
            for case in read_cases_file(path) or []:
                case_id = str(case.get("id", ""))
                out[case_id] = case_id.split(":")[0] if ":" in case_id else path.parent.name
    return out


def blind_writer(case_id: str) -> str:
    """A blind case's writer: `blind_sessions` names its cases `<writer>:<id>`, one writer a set."""
    return case_id.split(":")[0]


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
        "--fit-on",
        type=Path,
        action="append",
        help="a blind set's dev half: fit on the dev halves given (each set one writer) "
        "instead of on the kept-out training cases",
    )
    parser.add_argument(
        "--marginal",
        type=float,
        help="fit by ADR 0229's rule at this precision a kept band must beat (default: ADR 0152's)",
    )
    parser.add_argument(
        "--span-slack",
        type=float,
        help="the reader's span slack (default: the packaged reader's, none for another file)",
    )
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
    slack = args.span_slack
    if slack is None:
        slack = PACKAGED_QA_READER_SPAN_SLACK if args.reader == PACKAGED_QA_READER else 0.0
    reader = QaFieldReader.load(args.reader, sha256, READ_FROM, span_slack=slack)
    if args.fit_on:
        marked, labelled = read_blind(reader, args.fit_on)
        writer_of = blind_writer
    else:
        marked, labelled = read_kept_out(reader, args.corpus or [DATA], args.cache)
        who = writers(args.corpus or [DATA])

        def writer_of(case_id: str) -> str:
            return who.get(case_id, "?")

    tau = args.marginal

    def fitter(m: Sequence[Marked], g: Sequence[Labelled], r: FitRule) -> Floors:
        return fit(m, g, r) if tau is None else fit_marginal(m, g, r, tau)

    floors = fitter(marked, labelled, rule)
    args.out.write_text(json.dumps(file_body(floors, sha256), indent=1) + "\n")
    result = {
        "reader": args.reader.name,
        "answers": len(marked),
        "labelled spans": len(labelled),
        "base floors": figures(marked, labelled, {}, rule),
        "own floors": figures(marked, labelled, floors, rule),
        "split check": split_check(marked, labelled, rule, fitter),
        "one writer left out": writer_check(marked, labelled, rule, writer_of, fitter),
        "fields": per_field(marked, labelled, rule, floors),
    }
    if args.bands_on:
        result["bands"] = bands(marked, read_blind(reader, args.bands_on)[0], floors, rule)
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
