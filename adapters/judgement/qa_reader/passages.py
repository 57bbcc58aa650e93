"""The subject's lines as the reader's inputs: a turn of lines said one after another, with
no agent's line between them, is read as one passage (ADR 0120).

Every input asks every field before its line, and the fields' words are most of its tokens
(fourteen fields are about 35 tokens; a chat line is often ten): eight short lines read one
by one cost eight times the fields' words, read together once. A turn typed as several
lines is read as the same words sent as one message are, after the agent's line before the
turn (a line after the first was read with no agent's line at all). A passage never
outgrows one window, so a turn too long for one is read in several passages, never in
overlapping windows. An answer is mapped back to the line it stands in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SEPARATOR = "\n"  # whitespace to the tokenizer, and never part of a word when spans widen


@dataclass(frozen=True, slots=True)
class LineRead:
    """A subject line to read: its message index, its text, the agent's line before it."""

    index: int
    text: str
    agent: str


@dataclass(frozen=True, slots=True)
class Passage:
    """One input's text: one line, or lines packed with `SEPARATOR` between them."""

    lines: tuple[LineRead, ...]

    @property
    def text(self) -> str:
        return SEPARATOR.join(line.text for line in self.lines)

    @property
    def agent(self) -> str:
        return self.lines[0].agent

    def locate(self, start: int, end: int) -> tuple[LineRead, int, int] | None:
        """The line that characters `start`..`end` of `text` begin in, with their offsets in
        it, cut at its end (a span the reader runs across two lines is its first line's);
        None when nothing of a word is left."""
        begin = 0
        for line in self.lines:
            stop = begin + len(line.text)
            if start < stop + len(SEPARATOR):
                lo, hi = max(0, start - begin), min(len(line.text), end - begin)
                return (line, lo, hi) if line.text[lo:hi].strip() else None
            begin = stop + len(SEPARATOR)
        return None


def passages(lines: Sequence[LineRead], tokens: Sequence[int], room: int) -> list[Passage]:
    """`lines` (in transcript order; `tokens`, each one's token count) as passages: a line
    with no agent's line before it joins the passage of the line said just before it when
    the two fit in `room` tokens together; the passage is read after its first line's
    agent's line."""
    out: list[tuple[list[LineRead], int]] = []
    for line, count in zip(lines, tokens, strict=True):
        if out and not line.agent:
            run, used = out[-1]
            if run[-1].index == line.index - 1 and used + count <= room:
                run.append(line)
                out[-1] = (run, used + count)
                continue
        out.append(([line], count))
    return [Passage(tuple(run)) for run, _ in out]
