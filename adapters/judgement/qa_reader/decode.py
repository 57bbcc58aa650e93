"""From a pair's start and end scores to the words it answers.

A span (i, j) of the line's tokens scores start[i] + end[j]; the pair's "no answer" scores
start[0] + end[0]. A span is kept when its score beats no-answer by at least `margin`; a
single-valued field keeps its best, a list field every span that clears, best first, none
overlapping. Offsets are widened to whole words, so a value is never half a word.

A list field's gold starts and ends share one softmax in training (the loss is the log of
their summed probability, ADR 0106), so a line stating k items gives each about 1/k of the
mass and each item's span about 2 log k less over "no value" than a line's one value: the
more items a line states, the less any of them clears the floor. With `spread` (ADR 0129)
every span of the line is measured by the mass of all its starts and ends, which is what
training taught the reader to put above "no value", and the spans are then taken best first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

MAX_SPAN_TOKENS = 30
_WORD_CHAR = re.compile(r"\w")


@dataclass(frozen=True, slots=True)
class Answer:
    start: int  # character offsets in the line
    end: int
    margin: float  # score over no-answer


def answers(
    start: npt.NDArray[np.float32],
    end: npt.NDArray[np.float32],
    first: int,
    offsets: Sequence[tuple[int, int]],
    line: str,
    *,
    margin: float,
    many: bool,
    spread: bool = False,
) -> list[Answer]:
    n = len(offsets)
    if n == 0:
        return []
    null = float(start[0] + end[0])
    s = start[first : first + n].astype(np.float64)
    e = end[first : first + n].astype(np.float64)
    grid = s[:, None] + e[None, :]
    if spread:
        grid += _logsumexp(s) - s.max() + _logsumexp(e) - e.max()
    i, j = np.indices(grid.shape)
    grid[(j < i) | (j - i >= MAX_SPAN_TOKENS)] = -np.inf
    found: list[Answer] = []
    taken: list[tuple[int, int]] = []
    for flat in np.argsort(grid, axis=None)[::-1]:
        a, b = divmod(int(flat), n)
        over = float(grid[a, b]) - null
        if not np.isfinite(grid[a, b]) or over < margin:
            break
        if any(a <= y and x <= b for x, y in taken):
            continue
        lo, hi = widen(line, offsets[a][0], offsets[b][1])
        found.append(Answer(lo, hi, over))
        taken.append((a, b))
        if not many or len(found) >= 4:
            break
    return found


def widen(line: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and _WORD_CHAR.match(line[start - 1]):
        start -= 1
    while end < len(line) and _WORD_CHAR.match(line[end]):
        end += 1
    return start, end


def _logsumexp(x: npt.NDArray[np.float64]) -> float:
    top = float(x.max())
    return top + float(np.log(np.exp(x - top).sum()))
