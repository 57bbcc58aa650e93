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

The same training makes a line of several items put a high start on each item's first word
and a high end on each item's last, so the best pair is often the first item's start with
the last item's end: one span over every item. With `items` (a list field, ADR 0162) a kept
span is cut where the reader reads one item end and another begin (`cuts`).

Where a value has several plausible edges ("Boots at Whiteladies Road" and "Whiteladies
Road", "Hollowbrook" and "Hollowbrook Credit Union"), the best pair is often the shortest by
a hair, and a value cut short loses what a reviewer cannot put back. With `slack` (ADR 0227)
a single-valued field's answer is the widest span that holds the best pair, stays in its
sentence, and scores within `slack` of it; its margin stays the best pair's.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from factledger.application.sentences import sentence_spans

MAX_SPAN_TOKENS = 30
_WORD_CHAR = re.compile(r"\w")
# Characters that join two runs of word characters into one word: "Jae-won", "2.7", "5,000",
# "sasha.p88@gmail.com" (a comma only between digits).
_JOINED = re.compile(r"\w[-.@]\w|\d,\d")


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
    items: bool = False,
    slack: float = 0.0,
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
    # A list field's items: the tokens read as a start, as an end, more surely than "no
    # answer" is, and where words touch; only read when the spans are cut.
    split = (
        partial(
            cuts,
            grid,
            bar=null + margin,
            reads=(s > start[0], e > end[0]),
            apart=_apart(line, offsets),
        )
        if items
        else None
    )
    widens = slack > 0 and not (items or spread)
    sentence: npt.NDArray[np.int64] | None = None  # read at the first answer, if any
    found: list[Answer] = []
    taken: list[tuple[int, int]] = []
    for flat in np.argsort(grid, axis=None)[::-1]:
        a, b = divmod(int(flat), n)
        over = float(grid[a, b]) - null
        if not np.isfinite(grid[a, b]) or over < margin:
            break
        if any(a <= y and x <= b for x, y in taken):
            continue
        if widens:
            if sentence is None:
                sentence = _sentence_of_tokens(line, offsets)
            x, y = widest(grid, a, b, slack, sentence)
            # Widened into a better answer's span, it keeps its own words.
            x, y = (a, b) if any(x <= v and u <= y for u, v in taken) else (x, y)
            taken.append((x, y))
            found.append(Answer(*widen(line, offsets[x][0], offsets[y][1]), over))
        else:
            taken.append((a, b))
            for x, y in split(a, b) if split else [(a, b)]:
                lo, hi = widen(line, offsets[x][0], offsets[y][1])
                found.append(Answer(lo, hi, float(grid[x, y]) - null))
        # At most four answers a line, however many items their cuts make.
        if not many or len(taken) >= 4:
            break
    return found


def widest(
    grid: npt.NDArray[np.float64],
    a: int,
    b: int,
    slack: float,
    sentence: npt.NDArray[np.int64],
) -> tuple[int, int]:
    """The widest span (x, y) holding (a, b) whose score is within `slack` of its score and
    whose tokens lie in the sentences (a, b) spans (`sentence`: each token's sentence); of
    equally wide ones, the best scored."""
    xs = np.flatnonzero(sentence[: a + 1] >= sentence[a])
    ys = b + np.flatnonzero(sentence[b:] <= sentence[b])
    near = grid[np.ix_(xs, ys)]
    width = ys[None, :] - xs[:, None]
    # Cells under the bar (or past the longest span, -inf) lose to (a, b) itself.
    rank = np.where(near >= grid[a, b] - slack, width * 1e6 + near, -np.inf)
    i, j = np.unravel_index(int(np.argmax(rank)), rank.shape)
    return int(xs[i]), int(ys[j])


def _sentence_of_tokens(line: str, offsets: Sequence[tuple[int, int]]) -> npt.NDArray[np.int64]:
    """Each token's sentence in `line` (its index among the line's sentences; a token between
    two sentences counts as the earlier's)."""
    starts = [start for start, _ in sentence_spans(line)]
    return np.array([bisect_right(starts, lo) - 1 for lo, _ in offsets], dtype=np.int64)


def cuts(
    grid: npt.NDArray[np.float64],
    a: int,
    b: int,
    bar: float,
    reads: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]],
    apart: Callable[[int, int], bool],
) -> list[tuple[int, int]]:
    """The items of the span (a, b) of `grid` (span scores: `grid[i, j]` is start[i] + end[j]
    and a constant): cut at (k, m), the left part ending at token k and the right one starting
    at token m, where both parts score at least `bar`, so does the cut itself (end[k] +
    start[m], `grid[a, k] + grid[m, b] - grid[a, b]`: the reader reads an item end at k and
    another begin at m as surely as it reads an answer), and the parts' words do not touch
    (`apart`: a word's pieces are never cut apart); of those cuts, the surest; each part is
    cut again. Words between the parts that the reader reads as a start and then an end
    (`reads`: the tokens read as a start, as an end, more surely than "no answer") are items of
    their own, each at its best start and end: a cut never drops what the span held."""
    best: tuple[float, int, int] | None = None
    for k in range(a, b):
        if grid[a, k] < bar:
            continue
        for m in range(k + 1, b + 1):
            cut = float(grid[a, k] + grid[m, b] - grid[a, b])
            if grid[m, b] < bar or cut < bar or (best is not None and cut <= best[0]):
                continue
            if apart(k, m):
                best = (cut, k, m)
    if best is None:
        return [(a, b)]
    _, k, m = best
    return (
        cuts(grid, a, k, bar, reads, apart)
        + _between(grid, k, m, bar, reads, apart)
        + cuts(grid, m, b, bar, reads, apart)
    )


def _between(
    grid: npt.NDArray[np.float64],
    k: int,
    m: int,
    bar: float,
    reads: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]],
    apart: Callable[[int, int], bool],
) -> list[tuple[int, int]]:
    """The items the tokens strictly between k and m hold, where the reader reads a start and
    then an end: the surest span (cut as any answer is, if it clears `bar`), then those on
    either side of it, in the line's order."""
    starts, ends = reads
    inner = [
        (x, y)
        for x in range(k + 1, m)
        if starts[x]
        for y in range(x, m)
        if ends[y] and apart(k, x) and apart(y, m)
    ]
    if not inner:
        return []
    x, y = max(inner, key=lambda span: grid[span])
    return (
        _between(grid, k, x, bar, reads, apart)
        + cuts(grid, x, y, bar, reads, apart)
        + _between(grid, y, m, bar, reads, apart)
    )


def _apart(line: str, offsets: Sequence[tuple[int, int]]) -> Callable[[int, int], bool]:
    """Whether a part ending at token k and one starting at token m, each widened to whole
    words, leave at least one character between them."""

    def apart(k: int, m: int) -> bool:
        left_end = widen(line, offsets[k][0], offsets[k][1])[1]
        right_start = widen(line, offsets[m][0], offsets[m][1])[0]
        return right_start > left_end

    return apart


def widen(line: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) grown to whole words, a word running on across a joining character."""
    while True:
        before = (start, end)
        while start > 0 and _WORD_CHAR.match(line[start - 1]):
            start -= 1
        while end < len(line) and _WORD_CHAR.match(line[end]):
            end += 1
        if start >= 2 and _JOINED.fullmatch(line, start - 2, start + 1):
            start -= 1
        if end + 1 < len(line) and _JOINED.fullmatch(line, end - 1, end + 2):
            end += 1
        if (start, end) == before:
            return start, end


def _logsumexp(x: npt.NDArray[np.float64]) -> float:
    top = float(x.max())
    return top + float(np.log(np.exp(x - top).sum()))
