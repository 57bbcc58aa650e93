"""`python -m factledger.bench.evalsets.keyword_spellings <dev dirs>`: how many expected values
and questions list one word's spellings as keywords (`["3", "three"]`, `["Björn", "Bjorn"]`).

The rule before ADR 0222 asked every keyword as written, so such a value could never be
matched; the scorer now asks for the word once. Reads the cases' keywords: dev halves only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from factledger.bench.evalsets.cases import Case, load_cases
from factledger.bench.evalsets.score import spelling


def spells_one_word_twice(keywords: Sequence[str]) -> bool:
    """Whether two of `keywords` are spellings of one word."""
    return len({spelling(k.lower()) for k in keywords}) < len(keywords)


def counted(cases: Sequence[Case]) -> dict[str, int]:
    expected = [e for c in cases for s in c.sessions for e in s.proposals]
    questions = [q for c in cases for s in c.sessions for q in s.questions]
    return {
        "expected": len(expected),
        "expected_spelt_twice": sum(spells_one_word_twice(e.keywords) for e in expected),
        "questions": len(questions),
        "answers_spelt_twice": sum(spells_one_word_twice(q.answer) for q in questions),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.keyword_spellings")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' dev directories")
    args = parser.parse_args(argv)
    if any("heldout" in d.parts for d in args.sets):
        parser.error("keyword_spellings reads the cases: dev halves only")
    results = [{"set": str(d), **counted(load_cases(d))} for d in args.sets]
    sys.stdout.write(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
