"""How a reader's answers are scored, without torch (so the rules are unit-tested).

- Line level (training conversations' kept-out cases): an answer to (line, field) is right
  when it overlaps a gold span of that pair; recall counts the gold spans some answer overlaps.
- Session level, as the learned extractor proposes: a single-valued field gets the session's
  one best answer, a list field every answer; then the kept-out cases score by overlap with
  a gold span of the same field and line, and the blind sets as their scorer does (the value
  holds every expected keyword of the same field, one to one).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Read:
    """One answer a reader gave: in `session` of `case_id`, on subject line `line`."""

    case_id: str
    session: int
    line: int
    field: str
    start: int
    end: int
    value: str
    margin: float  # the reader's confidence: over no-answer, or a probability


@dataclass(frozen=True, slots=True)
class GoldSpan:
    case_id: str
    session: int
    line: int
    field: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class GoldKeywords:
    case_id: str
    session: int
    field: str
    keywords: tuple[str, ...]


def ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 0.0


def figures(right: int, made: int, found: int, expected: int) -> dict[str, float | int]:
    p, r = ratio(right, made), ratio(found, expected)
    return {
        "precision": p,
        "recall": r,
        "f1": round(2 * p * r / (p + r), 3) if p + r else 0.0,
        "made": made,
        "expected": expected,
    }


def proposed(reads: Sequence[Read], lists: Mapping[str, bool], floor: float) -> list[Read]:
    """What a session proposes at `floor`: each single field's best answer, every list one."""
    kept = [r for r in reads if r.margin >= floor]
    best: dict[tuple[str, int, str], Read] = {}
    out = []
    for r in kept:
        if lists.get(r.field, False):
            out.append(r)
            continue
        key = (r.case_id, r.session, r.field)
        if key not in best or r.margin > best[key].margin:
            best[key] = r
    return out + list(best.values())


def overlaps(r: Read, g: GoldSpan) -> bool:
    """Whether `r` is an answer of `g`'s field and line sharing a character with it."""
    return (
        (r.case_id, r.session, r.line, r.field) == (g.case_id, g.session, g.line, g.field)
        and r.start < g.end
        and g.start < r.end
    )


def score_spans(reads: Sequence[Read], gold: Sequence[GoldSpan]) -> dict[str, float | int]:
    """Every answer counted (line level): right if it overlaps a gold span of its pair."""
    right = sum(any(overlaps(r, g) for g in gold) for r in reads)
    found = sum(any(overlaps(r, g) for r in reads) for g in gold)
    return figures(right, len(reads), found, len(gold))


def score_one_to_one(reads: Sequence[Read], gold: Sequence[GoldSpan]) -> dict[str, float | int]:
    left = list(reads)
    found = 0
    for g in gold:
        hit = next((r for r in left if overlaps(r, g)), None)
        if hit is not None:
            left.remove(hit)
            found += 1
    return figures(found, len(reads), found, len(gold))


def score_keywords(reads: Sequence[Read], gold: Sequence[GoldKeywords]) -> dict[str, float | int]:
    by_session: dict[tuple[str, int], list[Read]] = defaultdict(list)
    for r in reads:
        by_session[(r.case_id, r.session)].append(r)
    found = 0
    for g in gold:
        left = by_session[(g.case_id, g.session)]
        hit = next(
            (
                r
                for r in left
                if r.field == g.field and all(k.lower() in r.value.lower() for k in g.keywords)
            ),
            None,
        )
        if hit is not None:
            left.remove(hit)
            found += 1
    return figures(found, len(reads), found, len(gold))
