"""An evaluation set's dev cases as the QA reader's training conversations.

`python -m factledger.bench.judgement.qa_reader.from_evalset --set DIR [--set DIR ...] --out OUT`
writes `OUT/cases-<domain>.yaml` in the training format (`bench/judgement/conversations.py`),
which `qa_reader train --corpus OUT` reads beside the project's writers (ADR 0130).

The evaluation format names a proposal by its keywords, not by its words in a line, so each
one is located: the one subject line of its session that holds every keyword (as the scorer
matches them, case-insensitive), and in it the shortest stretch that holds them, widened to
whole words; that stretch is the span the reader is taught to answer. With `--spans value`
(ADR 0219) the span is the writer's value instead, where the line says it word for word
around that stretch ("Senior backend engineer", not its keyword "backend"); a reader so
trained found no more facts and proposed values whole a little more often (ADRs 0219, 0220:
not adopted). A list field's stretch that a list separator cuts into pieces each holding
keywords gives each piece as its own item (the hits of a keyword start a word). A proposal
held only by an agent's line that a subject line answers is the agent's words, which the
reader cannot answer (it answers in the subject's line), and an inferred one in no line has
no words to answer: each is counted and not taught. A stated proposal in no line (a
paraphrase, a number in words) or in several is not guessed: it leaves its whole session
out, since its subject lines would otherwise teach "no value" where a value was said. A
`not_proposed` entry is kept with the words of the first line (of any role) holding its
keywords, as what it is: its line, unlabelled for its field, is a "no value" example there.
Every outcome is counted and printed. A set under `heldout` is refused: held-out halves are
never read (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from factledger.bench.evalsets.cases import DOMAINS, LIST_FIELDS, Case, Session, load_cases

HELD_OUT = "heldout"
_WORD = re.compile(r"\w")
_LIST_SEPARATOR = re.compile(r",|;|\band\b|\bor\b|\bplus\b", re.IGNORECASE)
_EDGE_PUNCTUATION = ".,;:!?\"')("

LOCATED = "located in one subject line"
LOCATED_LEFT_OUT = "located in one subject line, its session left out"
ITEMS = "located in one subject line, as several list items"
BY_VALUE = "of those, spanned by the value's own words (--spans value)"
AGENT = "the agent's line, answered by the subject (not a span the reader answers)"
NOWHERE = "stated, in no line (session left out)"
INFERRED = "inferred, in no line (no span to answer)"
SEVERAL = "in several subject lines (session left out)"
NO_KEYWORDS = "no keywords (session left out)"
NOT_PROPOSED_LOCATED = "not_proposed located"
NOT_PROPOSED_MISSED = "not_proposed not located (dropped)"


@dataclass(slots=True)
class Converted:
    cases: list[dict[str, Any]] = field(default_factory=list)
    proposals: Counter[str] = field(default_factory=Counter)
    sessions_kept: int = 0
    sessions_left_out: int = 0

    def report(self) -> dict[str, Any]:
        return {
            "cases": len(self.cases),
            "sessions kept": self.sessions_kept,
            "sessions left out": self.sessions_left_out,
            "labels": dict(sorted(self.proposals.items())),
        }


def refuse_held_out(directory: Path) -> None:
    if HELD_OUT in directory.resolve().parts:
        raise SystemExit(f"{directory}: a held-out half is never read (only dev halves convert)")


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and _WORD.match(text[start - 1]):
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    while end > start and text[end - 1] in _EDGE_PUNCTUATION:
        end -= 1
    return start, end


def shortest_stretch(text: str, keywords: Sequence[str]) -> tuple[int, int] | None:
    """The shortest (start, end) of `text` holding every keyword, widened to whole words."""
    low = text.lower()
    hits = [
        [(m.start(), m.end()) for m in re.finditer(rf"(?<!\w){re.escape(k.lower())}", low)]
        for k in keywords
    ]
    if not keywords or any(not h for h in hits):
        return None
    best: tuple[int, int] | None = None
    for anchor in (h for found in hits for h in found):
        begin = anchor[0]
        ends = [min((e for s, e in found if s >= begin), default=None) for found in hits]
        if any(e is None for e in ends):
            continue
        stretch = (begin, max(e for e in ends if e is not None))
        if best is None or stretch[1] - stretch[0] < best[1] - best[0]:
            best = stretch
    return None if best is None else _widen(text, *best)


def value_stretch(text: str, stretch: tuple[int, int], value: str) -> tuple[int, int] | None:
    """Where `text` says `value` word for word (case aside, from a word start), widened to
    whole words, covering the keywords' `stretch`; None where it says it nowhere so."""
    wanted = value.strip().lower()
    if not wanted:
        return None
    for m in re.finditer(rf"(?<!\w){re.escape(wanted)}", text.lower()):
        begin, end = _widen(text, m.start(), m.end())
        if begin <= stretch[0] and stretch[1] <= end:
            return begin, end
    return None


def list_items(
    text: str, stretch: tuple[int, int], keywords: Sequence[str]
) -> list[tuple[int, int]]:
    """A list field's stretch cut at its separators into pieces that each hold keywords; the
    whole stretch where a piece would hold none."""
    start, end = stretch
    cuts = [start, *(start + m.start() for m in _LIST_SEPARATOR.finditer(text[start:end])), end]
    pieces = []
    for begin, stop in itertools.pairwise(cuts):
        piece = text[begin:stop]
        held = [k for k in keywords if k.lower() in piece.lower()]
        if not held:
            continue
        found = shortest_stretch(piece, held)
        if found is None:
            return [stretch]
        pieces.append((begin + found[0], begin + found[1]))
    covered = {k for k in keywords for b, e in pieces if k.lower() in text[b:e].lower()}
    return pieces if len(pieces) > 1 and covered == set(keywords) else [stretch]


def _subject_lines_holding(session: Session, keywords: Sequence[str]) -> list[int]:
    return [
        n
        for n, (role, text) in enumerate(session.lines)
        if role == "subject" and shortest_stretch(text, keywords) is not None
    ]


def _answered_agent_line(session: Session, keywords: Sequence[str]) -> bool:
    lines = session.lines
    return any(
        role == "agent"
        and n + 1 < len(lines)
        and lines[n + 1][0] == "subject"
        and shortest_stretch(text, keywords) is not None
        for n, (role, text) in enumerate(lines)
    )


def _session(
    session: Session, converted: Converted, *, by_value: bool = False
) -> dict[str, Any] | None:
    proposals: list[dict[str, Any]] = []
    located: Counter[str] = Counter()
    whole = True
    for p in session.proposals:
        where = _subject_lines_holding(session, p.keywords) if p.keywords else []
        if len(where) != 1:
            if not where and p.keywords and _answered_agent_line(session, p.keywords):
                # no subject line holds it, so none is taught "no value" where it was said
                converted.proposals[AGENT] += 1
                continue
            if not where and p.keywords and p.origin == "inferred":
                # a conclusion nobody said: no span to teach, and no line said it in words
                converted.proposals[INFERRED] += 1
                continue
            whole = False
            if not p.keywords:
                converted.proposals[NO_KEYWORDS] += 1
            elif where:
                converted.proposals[SEVERAL] += 1
            else:
                converted.proposals[NOWHERE] += 1
            continue
        line = where[0]
        text = session.lines[line][1]
        stretch = shortest_stretch(text, p.keywords)
        assert stretch is not None  # noqa: S101 - the line was chosen for holding it
        said = value_stretch(text, stretch, str(p.value)) if by_value else None
        if said is not None:
            spans = [said]
            located[BY_VALUE] += 1
        elif p.field in LIST_FIELDS:
            spans = list_items(text, stretch, p.keywords)
        else:
            spans = [stretch]
        located[ITEMS if len(spans) > 1 else LOCATED] += 1
        for begin, end in spans:
            label: dict[str, Any] = {
                "field": p.field,
                "line": line,
                "span": text[begin:end],
                "value": text[begin:end],
                "origin": p.origin,
                "hedged": p.hedged,
                "correction": p.correction,
            }
            if p.updates is not None:
                label["updates"] = p.updates
            if p.condition is not None:
                label["condition"] = p.condition
            proposals.append(label)
    if not whole:
        converted.proposals[LOCATED_LEFT_OUT] += located[LOCATED] + located[ITEMS]
        converted.sessions_left_out += 1
        return None
    converted.proposals.update(located)
    not_proposed = []
    for n in session.not_proposed:
        holding = [
            (index, found)
            for index, (_, text) in enumerate(session.lines)
            if n.keywords and (found := shortest_stretch(text, n.keywords)) is not None
        ]
        if not holding:
            converted.proposals[NOT_PROPOSED_MISSED] += 1
            continue
        converted.proposals[NOT_PROPOSED_LOCATED] += 1
        index, (begin, end) = holding[0]
        entry: dict[str, Any] = {
            "line": index,
            "span": session.lines[index][1][begin:end],
            "why": n.why,
        }
        if n.field is not None:
            entry["field"] = str(n.field)
        not_proposed.append(entry)
    converted.sessions_kept += 1
    return {
        "at": session.at.isoformat().replace("+00:00", "Z"),
        "channel": session.channel,
        "lines": [{"role": role, "text": text} for role, text in session.lines],
        "expect": {"proposals": proposals, "not_proposed": not_proposed},
    }


def field_meanings(domain: str) -> dict[str, str]:
    """The domain's fields as the training format names them (a list field marked `list:`)."""
    return {
        f: f"list: {f.replace('_', ' ')}" if f in LIST_FIELDS else f.replace("_", " ")
        for f in DOMAINS[domain][1]
    }


def convert_case(
    case: Case, converted: Converted, *, by_value: bool = False
) -> dict[str, Any] | None:
    read = (_session(s, converted, by_value=by_value) for s in case.sessions)
    sessions = [s for s in read if s is not None]
    if not sessions:
        return None
    return {
        # the key the blind sets' sessions are scored under, so one hash keeps a case out
        "id": f"{case.writer}:{case.id}",
        "domain": case.domain,
        "kind": case.kind,
        "fields": field_meanings(case.domain),
        "tags": list(case.tags),
        "sessions": sessions,
        "writer": case.writer,
    }


def convert(directories: Sequence[Path], *, by_value: bool = False) -> Converted:
    converted = Converted()
    for directory in directories:
        refuse_held_out(directory)
        for case in load_cases(directory):
            made = convert_case(case, converted, by_value=by_value)
            if made is not None:
                converted.cases.append(made)
    return converted


def write(converted: Converted, out: Path) -> dict[str, int]:
    """`out/cases-<domain>.yaml`, cases in the order read; returns cases per file."""
    out.mkdir(parents=True, exist_ok=True)
    by_domain: dict[str, list[Mapping[str, Any]]] = {}
    for case in converted.cases:
        by_domain.setdefault(str(case["domain"]), []).append(case)
    for domain, cases in sorted(by_domain.items()):
        text = yaml.safe_dump(list(cases), sort_keys=False, allow_unicode=True, width=200)
        (out / f"cases-{domain}.yaml").write_text(text, encoding="utf-8")
    return {domain: len(cases) for domain, cases in sorted(by_domain.items())}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factledger.bench.judgement.qa_reader.from_evalset"
    )
    parser.add_argument(
        "--set", action="append", required=True, help="an evaluation set's dev half"
    )
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--spans",
        choices=("keywords", "value"),
        default="keywords",
        help="a proposal's span: the shortest stretch holding its keywords (as ADRs 0130-0213 "
        "trained), or its value's own words where the line says them around it (ADR 0219)",
    )
    args = parser.parse_args(argv)
    converted = convert([Path(s) for s in args.set], by_value=args.spans == "value")
    files = write(converted, Path(args.out))
    print(json.dumps({**converted.report(), "files": files}, indent=2))  # noqa: T201 - the lab's report


if __name__ == "__main__":
    main()
