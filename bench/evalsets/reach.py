"""`python -m factledger.bench.evalsets.reach <dev dirs>`: how many expected values a reader of
spans could find at all, by where the scorer's keywords are said.

The product proposes a span of one line (a reader's answer). An expected value is scored by
its keywords, which the writer chose: where no line holds them all, no span can match it (the
writer normalised: "2" for "my wife and I", "flexible" for "whenever"), and where only an
agent's line does, it is said by the agent (a read-back the subject confirms). These bound
the share of facts found by spans of the subject's lines, whatever the readers. Reads the
cases' keywords: dev halves only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

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


def counted(cases: Sequence[Case]) -> dict[str, int]:
    places = Counter(place(s, e) for c in cases for s in c.sessions for e in s.proposals)
    return {"expected": sum(places.values()), **{p: places[p] for p in PLACES}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.reach")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' dev directories")
    args = parser.parse_args(argv)
    if any("heldout" in d.parts for d in args.sets):
        parser.error("reach reads the cases: dev halves only")
    counts = {str(d): counted(load_cases(d)) for d in args.sets}
    pooled = {k: sum(c[k] for c in counts.values()) for k in ("expected", *PLACES)}
    rows = [{"set": name, **c} for name, c in [*counts.items(), ("all", pooled)]]
    sys.stdout.write(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
