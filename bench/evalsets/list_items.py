"""How many expected items each list item the product proposed holds (ADR 0162).

`python -m factledger.bench.evalsets.list_items <dirs> [--list-cuts on|off] [--detail FILE]`
plays the cases as the scorer plays them (the learned extractor and judgement, the bare
schema) and reads every item of every list value proposed (a `set` or an `append` of a list
field) against the items its session expects of that field, by their keywords as the scorer
matches them: an item holding none of them, one (what a reviewer expects an item to be), or
two or more (one item where the subject named several: "Spark and Airflow, some dbt").

The scorer counts a list proposal right when its items hold the expected ones, so it does not
see the difference; this count does. Held-out halves give counts only (`--detail` refuses
them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from factledger.api.log_setup import configure_logging
from factledger.bench.evalsets.cases import LIST_FIELDS, load_cases
from factledger.bench.evalsets.run import CaseRun, run_cases
from factledger.bench.evalsets.score import holds_all
from factledger.domain.provenance import STATES_VALUE
from factledger.domain.values import ListValue

HOLDS = ("none", "one", "several")


@dataclass(frozen=True, slots=True)
class ListItem:
    """One item of a list value the product proposed, and how many expected items it holds."""

    case: str
    session: int
    field: str
    item: str
    holds: str


def list_items(run: CaseRun) -> list[ListItem]:
    found: list[ListItem] = []
    for made in run.made:
        proposal = made.proposal
        if proposal.field not in LIST_FIELDS or proposal.operation not in STATES_VALUE:
            continue
        if not isinstance(proposal.value, ListValue):
            continue
        expected = [
            x.keywords
            for x in run.case.sessions[made.session].proposals
            if x.field == proposal.field and x.keywords
        ]
        for item in proposal.value.items:
            n = sum(holds_all(item, keywords) for keywords in expected)
            found.append(
                ListItem(run.case.id, made.session, proposal.field, item, HOLDS[min(n, 2)])
            )
    return found


async def half_items(directory: Path, list_cuts: bool | None) -> list[ListItem]:
    extractor: dict[str, Any] = {"kind": "learned"}
    if list_cuts is not None:
        extractor["qa_reader_list_cuts"] = list_cuts
    runs = await run_cases(load_cases(directory), extractor=extractor)
    return [item for run in runs for item in list_items(run)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.list_items")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' directories")
    parser.add_argument(
        "--list-cuts", choices=("on", "off"), help="ADR 0162's cuts (default: the product's)"
    )
    parser.add_argument("--detail", type=Path, help="also write each item here (dev only)")
    args = parser.parse_args(argv)
    if args.detail is not None and any("heldout" in d.parts for d in args.sets):
        raise SystemExit("--detail lists what was said: dev halves only")
    configure_logging(json_lines=False, level="WARNING")
    cuts = None if args.list_cuts is None else args.list_cuts == "on"
    results: list[dict[str, Any]] = []
    detail: list[dict[str, Any]] = []
    for directory in args.sets:
        items = asyncio.run(half_items(directory, cuts))
        counts = Counter(i.holds for i in items)
        results.append({"set": str(directory), **{h: counts[h] for h in HOLDS}})
        detail += [{"set": str(directory), **asdict(i)} for i in items]
    total = {h: sum(r[h] for r in results) for h in HOLDS}
    sys.stdout.write(json.dumps({"halves": results, "all": total}, indent=2) + "\n")
    if args.detail is not None:
        args.detail.write_text(json.dumps(detail, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
