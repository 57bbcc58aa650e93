"""What typing the blind sets' dates, amounts and counts would make of the product's proposals.

`python -m factledger.bench.evalsets.typed_values <dirs> [--currency USD] [--detail FILE]`
plays the cases as the scorer plays them (the learned extractor and judgement, every field
text), then reads each proposal of a field a deployment would type (`TYPED_FIELDS`) as the
product's `WordsValueReader` reads a typed field's words (ADR 0158), against the session's day
and the `--currency` a deployment would give its money fields. Each such proposal is sorted:

- the scorer matched it to an expected value: `same` (read, and the writer's value reads as
  the same date, number or amount; money by amount), `other` (read, and the writer's value
  reads otherwise), `unread` (the words read as no single value: typed, it is lost), or
  `writer_unread` (read, but the writer's value reads as no single value: "around 450k, up to
  475k"; nothing to compare);
- it matched nothing: `now_right` (read as a value the session expects for the field: "ninth
  of June sixty-eight" holds no "1968", its date does), `wrong_read` (typed, still proposed,
  still wrong) or `wrong_unread` (typed, dropped).

Reading the writer's value with the same reader is no circle here: the writers wrote dates in
ISO and amounts and counts in digits, which the reader reads by their digits alone. The held-out
halves are reported by their counts only (`--detail` refuses them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any

from factledger.adapters.values.words import WordsValueReader
from factledger.api.log_setup import configure_logging
from factledger.application.proposals.typed import ReadingHints
from factledger.bench.evalsets.cases import load_cases
from factledger.bench.evalsets.run import CaseRun, run_cases
from factledger.bench.evalsets.score import match_expected
from factledger.domain.provenance import Operation
from factledger.domain.values import FieldValue, MoneyValue, ValueType, render

# The blind sets' fields a deployment would type: dates, amounts and counts.
TYPED_FIELDS: dict[str, ValueType] = {
    "date_of_birth": ValueType.DATE,
    "move_by_date": ValueType.DATE,
    "earliest_start_date": ValueType.DATE,
    "budget": ValueType.MONEY,
    "deductible": ValueType.MONEY,
    "salary_expectation": ValueType.MONEY,
    "team_size": ValueType.NUMBER,
    "years_experience": ValueType.NUMBER,
    "bedrooms": ValueType.NUMBER,
    "household_size": ValueType.NUMBER,
}
OUTCOMES = (
    "same",
    "other",
    "unread",
    "writer_unread",
    "now_right",
    "wrong_read",
    "wrong_unread",
)


@dataclass(frozen=True, slots=True)
class Reading:
    case: str
    session: int
    field: str
    words: str
    read: str | None
    writer: str
    outcome: str


def _comparable(value: FieldValue | None) -> object:
    """A money value compares by its amount: the writers seldom name the currency."""
    if isinstance(value, MoneyValue):
        return value.amount.normalize()
    if value is None:
        return None
    return render(value)


@dataclass(frozen=True, slots=True)
class TypedReader:
    """The product's reader as a deployment configures it: the money fields' `currency`."""

    reader: WordsValueReader
    currency: str | None

    def said(self, kind: ValueType, words: str, said_on: date) -> FieldValue | None:
        hints = ReadingHints(currency=self.currency)
        return self.reader.read(kind, words, said_on=said_on, hints=hints)

    def written(self, kind: ValueType, value: str, said_on: date) -> object:
        """The writer's value, comparable: "XXX" (ISO's code for no currency) lets an amount
        the writer wrote without one compare by its number."""
        return _comparable(
            self.reader.read(
                kind, value, said_on=said_on, hints=ReadingHints(currency=self.currency or "XXX")
            )
        )


def readings(run: CaseRun, reader: WordsValueReader, currency: str | None) -> list[Reading]:
    """The run's proposals of typed fields, each read and sorted (the module's list)."""
    typed = TypedReader(reader, currency)
    made = [m for m in run.made if m.proposal.operation is Operation.SET]
    matched = {id(m): key for key, m in match_expected(run.case, made).items()}
    out: list[Reading] = []
    for m in made:
        kind = TYPED_FIELDS.get(m.proposal.field)
        if kind is None or m.proposal.value is None:
            continue
        session = run.case.sessions[m.session]
        said_on = session.at.date()
        words = render(m.proposal.value)
        read = typed.said(kind, words, said_on)
        key = matched.get(id(m))
        writer = "" if key is None else session.proposals[key[1]].value
        if key is None:
            expected = [x.value for x in session.proposals if x.field == m.proposal.field]
            right = {typed.written(kind, v, said_on) for v in expected}
            hit = read is not None and _comparable(read) in right
            outcome = "now_right" if hit else "wrong_unread" if read is None else "wrong_read"
        elif read is None:
            outcome = "unread"
        elif (wrote := typed.written(kind, writer, said_on)) is None:
            outcome = "writer_unread"
        else:
            outcome = "same" if _comparable(read) == wrote else "other"
        shown = None if read is None else render(read)
        out.append(Reading(run.case.id, m.session, m.proposal.field, words, shown, writer, outcome))
    return out


async def half_readings(directory: Path, currency: str | None) -> list[Reading]:
    runs = await run_cases(load_cases(directory), extractor={"kind": "learned"})
    reader = WordsValueReader()
    return [r for run in runs for r in readings(run, reader, currency)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.typed_values")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' directories")
    parser.add_argument("--currency", help="the money fields' own currency (default: none)")
    parser.add_argument("--detail", type=Path, help="also write each reading here (dev only)")
    args = parser.parse_args(argv)
    if args.detail is not None and any("heldout" in d.parts for d in args.sets):
        raise SystemExit("--detail lists what was said: dev halves only")
    configure_logging(json_lines=False, level="WARNING")
    results: list[dict[str, Any]] = []
    detail: list[dict[str, Any]] = []
    for directory in args.sets:
        found = asyncio.run(half_readings(directory, args.currency))
        by_type = Counter((TYPED_FIELDS[r.field].value, r.outcome) for r in found)
        results.append(
            {
                "set": str(directory),
                "outcomes": {o: sum(1 for r in found if r.outcome == o) for o in OUTCOMES},
                "by_type": {f"{t}:{o}": n for (t, o), n in sorted(by_type.items())},
            }
        )
        detail += [{"set": str(directory), **asdict(r)} for r in found]
    sys.stdout.write(json.dumps(results, indent=2) + "\n")
    if args.detail is not None:
        args.detail.write_text(json.dumps(detail, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
