"""Where a dev half's precision goes: each proposal that matches no expected one, by class.

`python -m factledger.bench.evalsets.wrong_proposals <dev dirs> [--detail FILE] [--value-fit
on|off | --value-fit-file FILE --value-fit-sha256 HEX]` plays the cases as the scorer plays
them (the learned extractor and judgement, the bare schema; a value-fit file of the lab's in
place of the packaged one) and sorts every proposal the scorer counts wrong under the first
class that holds:

- `not_proposed:<why>`: its value holds the keywords of an item the writer marked not to be
  proposed in that session (a third party's fact, a negation, small talk...);
- `another_field`: its value holds the keywords of a value the session expects for another
  field;
- `said_before`: its value holds the keywords of a value its field was expected to take in
  another session (a value said again, proposed again);
- `other_words`: the session expects the field, and the value does not hold that value's
  keywords (a number or date said in words, a description for a status, a span cut
  elsewhere);
- `unlabelled`: none of these: the writer expected nothing of the field in that session.

The detail lists each one with the field's earlier proposals in the case. Dev halves only.
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
from factledger.bench.evalsets.cases import Case, load_cases
from factledger.bench.evalsets.reader_file import add_value_fit_file_options, value_fit_file_of
from factledger.bench.evalsets.run import CaseRun, run_cases
from factledger.bench.evalsets.score import holds_all, match_expected, value_proposals
from factledger.bench.proposal_eval import Made
from factledger.domain.values import render


@dataclass(frozen=True, slots=True)
class Wrong:
    """A proposal that matches no expected one, and the first class that holds."""

    case: str
    session: int
    field: str
    value: str
    kind: str
    earlier: tuple[tuple[int, str], ...]


def value_of(made: Made) -> str:
    value = made.proposal.value
    return "" if value is None else render(value)


def wrong_kind(case: Case, made: Made) -> str:
    """The first class (the module's list) that holds for `made`, a proposal of `case`."""
    value, field = value_of(made), made.proposal.field
    here = case.sessions[made.session]
    for item in here.not_proposed:
        if item.keywords and holds_all(value, item.keywords):
            return f"not_proposed:{item.why or 'unstated'}"
    if any(
        x.field != field and x.keywords and holds_all(value, x.keywords) for x in here.proposals
    ):
        return "another_field"
    elsewhere = (s for n, s in enumerate(case.sessions) if n != made.session)
    if any(
        x.field == field and x.keywords and holds_all(value, x.keywords)
        for s in elsewhere
        for x in s.proposals
    ):
        return "said_before"
    if any(x.field == field for x in here.proposals):
        return "other_words"
    return "unlabelled"


def wrong_proposals(run: CaseRun) -> list[Wrong]:
    """The run's proposals that state a value (requests to forget, removals and said-lines
    requests are scored apart) that the scorer matches to nothing."""
    made = value_proposals(run.made)
    right = {id(m) for m in match_expected(run.case, made).values()}
    return [
        Wrong(
            run.case.id,
            m.session,
            m.proposal.field,
            value_of(m),
            wrong_kind(run.case, m),
            tuple(
                (e.session, value_of(e))
                for e in made
                if e.proposal.field == m.proposal.field and e.session < m.session
            ),
        )
        for m in made
        if id(m) not in right
    ]


async def half_wrong(
    directory: Path, value_fit: bool | None = None, value_fit_file: tuple[Path, str] | None = None
) -> tuple[int, list[Wrong]]:
    """How many proposals a dev half's cases made, and the wrong ones (`value_fit`: the
    value-fit head on or off, ADR 0211; None: the product's default; `value_fit_file`: a lab
    file and its pin read in place of the packaged one)."""
    if "heldout" in directory.parts:
        raise SystemExit("wrong_proposals reads the cases: dev halves only")
    extractor: dict[str, Any] = {"kind": "learned"}
    if value_fit is not None:
        extractor["value_fit"] = "learned" if value_fit else "none"
    if value_fit_file is not None:
        extractor["value_fit_path"], extractor["value_fit_sha256"] = value_fit_file
    runs = await run_cases(load_cases(directory), extractor=extractor)
    made = sum(len(value_proposals(r.made)) for r in runs)
    return made, [w for run in runs for w in wrong_proposals(run)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.wrong_proposals")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' dev directories")
    parser.add_argument("--detail", type=Path, help="also write each wrong proposal here")
    parser.add_argument(
        "--value-fit",
        choices=("on", "off"),
        help="the value-fit head (ADR 0211; default: the product's default)",
    )
    add_value_fit_file_options(parser)
    args = parser.parse_args(argv)
    value_fit = None if args.value_fit is None else args.value_fit == "on"
    value_fit_file = value_fit_file_of(args, parser)
    if value_fit_file is not None and value_fit is False:
        parser.error("--value-fit-file: not with --value-fit off")
    configure_logging(json_lines=False, level="WARNING")
    results: list[dict[str, Any]] = []
    detail: list[dict[str, Any]] = []
    for directory in args.sets:
        made, wrong = asyncio.run(half_wrong(directory, value_fit, value_fit_file))
        kinds = Counter(w.kind.split(":")[0] for w in wrong)
        results.append(
            {"set": str(directory), "made": made, "wrong": len(wrong), "kinds": dict(kinds)}
        )
        detail += [{"set": str(directory), **asdict(w)} for w in wrong]
    sys.stdout.write(json.dumps(results, indent=2) + "\n")
    if args.detail is not None:
        args.detail.write_text(json.dumps(detail, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
