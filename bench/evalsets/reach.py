"""`python -m factledger.bench.evalsets.reach <dev dirs>`: how many expected values a reader of
spans could find at all, by where the scorer's keywords are said.

The product proposes a span of one line (a reader's answer). An expected value is scored by
its keywords, which the writer chose: where no line holds them all, no span can match it (the
writer normalised: "2" for "my wife and I", "flexible" for "whenever"), and where only an
agent's line does, it is said by the agent (a read-back the subject confirms). These bound
the share of facts found by spans of the subject's lines, whatever the readers. Reads the
cases' keywords: dev halves only.

With `--wrong DETAIL` (the detail file of `python -m factledger.bench.evalsets.wrong_proposals`
over the same halves) it also places each proposal that class calls `other_words` (its field
expected in its session, its value without that value's keywords) by where the expected
value is said: a reader's span cut elsewhere, a value only the agent said, or the writer's
own wording of it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from factledger.bench.evalsets.cases import Case, Expected, Session, load_cases
from factledger.bench.evalsets.score import holds_all

PLACES = ("a_subject_line", "an_agent_line_only", "across_lines_only", "no_line")


def place(session: Session, expected: Expected) -> str:
    """Where the session's lines hold every keyword of `expected`, by the scorer's rule."""
    said = [text for role, text in session.lines if role == "subject"]
    if any(holds_all(text, expected.keywords) for text in said):
        return "a_subject_line"
    if any(holds_all(text, expected.keywords) for role, text in session.lines):
        return "an_agent_line_only"
    if holds_all("\n".join(text for _, text in session.lines), expected.keywords):
        return "across_lines_only"
    return "no_line"


def best_place(session: Session, field: str) -> str:
    """The nearest place (`PLACES`' order) any of the session's expected values of `field` is
    said; `no_line` where the session expects nothing of it."""
    found = {place(session, e) for e in session.proposals if e.field == field}
    return next((p for p in PLACES if p in found), "no_line")


def wrong_in_other_words(
    detail: Sequence[Mapping[str, Any]], cases: Mapping[str, Mapping[str, Case]]
) -> dict[str, int]:
    """`other_words` proposals of a `wrong_proposals` detail, by where the value they miss is
    said (`cases`: each half's cases by id)."""
    places = Counter(
        best_place(cases[w["set"]][w["case"]].sessions[w["session"]], w["field"])
        for w in detail
        if w["kind"] == "other_words"
    )
    return {p: places[p] for p in PLACES}


def counted(cases: Sequence[Case]) -> dict[str, int]:
    places = Counter(place(s, e) for c in cases for s in c.sessions for e in s.proposals)
    return {"expected": sum(places.values()), **{p: places[p] for p in PLACES}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.reach")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' dev directories")
    parser.add_argument("--wrong", type=Path, help="a `wrong_proposals` detail of these halves")
    args = parser.parse_args(argv)
    if any("heldout" in d.parts for d in args.sets):
        parser.error("reach reads the cases: dev halves only")
    cases = {str(d): load_cases(d) for d in args.sets}
    counts = {name: counted(read) for name, read in cases.items()}
    pooled = {k: sum(c[k] for c in counts.values()) for k in ("expected", *PLACES)}
    rows: list[dict[str, Any]] = [
        {"set": name, **c} for name, c in [*counts.items(), ("all", pooled)]
    ]
    if args.wrong is not None:
        detail = json.loads(args.wrong.read_text(encoding="utf-8"))
        if not {w["set"] for w in detail} <= set(cases):
            parser.error("--wrong: its detail names halves not given here")
        by_id = {name: {c.id: c for c in read} for name, read in cases.items()}
        rows[-1]["wrong_in_other_words"] = wrong_in_other_words(detail, by_id)
    sys.stdout.write(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
