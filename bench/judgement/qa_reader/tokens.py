"""A pair as the encoder reads it: `[CLS] question [SEP] line [SEP] agent's line [SEP]`.

The question is segment 0, the line and the agent's line segment 1. Only the line's tokens
can be an answer; position 0 (`[CLS]`) means none. A line longer than the budget is read in
overlapping windows, each its own input; a gold span goes to every window that holds it
whole. The agent's line is cut from its start (its end is what the subject answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from factledger.adapters.judgement.qa_reader.inputs import special_id, windows

MAX_TOKENS = 96
MAX_QUESTION = 24
MAX_AGENT = 24
CLS, SEP = "[CLS]", "[SEP]"


@dataclass(frozen=True, slots=True)
class Encoded:
    ids: tuple[int, ...]
    types: tuple[int, ...]
    first_line_token: int  # position of the line's first token in `ids`
    offsets: tuple[tuple[int, int], ...]  # character offsets in the line of its tokens
    starts: tuple[int, ...]  # gold start positions in `ids` (empty: no answer)
    ends: tuple[int, ...]


def load_tokenizer(path: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@dataclass(frozen=True, slots=True)
class PairTokens:
    """Tokenises pairs; `cls` and `sep` are the vocabulary's ids."""

    tokenizer: Tokenizer
    max_tokens: int = MAX_TOKENS

    def encode(
        self,
        question: str,
        line: str,
        agent: str,
        spans: Sequence[tuple[int, int]] = (),
    ) -> list[Encoded]:
        cls, sep = self._special(CLS), self._special(SEP)
        q = self.tokenizer.encode(question, add_special_tokens=False).ids[:MAX_QUESTION]
        said = self.tokenizer.encode(line, add_special_tokens=False)
        a = self.tokenizer.encode(agent, add_special_tokens=False).ids[-MAX_AGENT:] if agent else []
        room = self.max_tokens - len(q) - 4  # CLS and three SEPs
        width = max(8, min(len(said.ids), room))
        agent_room = max(0, room - width)
        a = a[len(a) - agent_room :] if agent_room < len(a) else a
        encoded = []
        for begin in windows(len(said.ids), width):
            ids_line = said.ids[begin : begin + width]
            offsets = tuple((int(x), int(y)) for x, y in said.offsets[begin : begin + width])
            first = len(q) + 2
            starts, ends = _gold(spans, offsets, first)
            ids = (cls, *q, sep, *ids_line, sep, *a, sep) if a else (cls, *q, sep, *ids_line, sep)
            types = (0,) * (len(q) + 2) + (1,) * (len(ids) - len(q) - 2)
            encoded.append(Encoded(ids, types, first, offsets, starts, ends))
        return encoded

    def _special(self, token: str) -> int:
        return special_id(self.tokenizer, token)


def _gold(
    spans: Sequence[tuple[int, int]], offsets: Sequence[tuple[int, int]], first: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if not offsets:
        return (), ()
    lo, hi = offsets[0][0], offsets[-1][1]
    starts, ends = [], []
    for begin, end in spans:
        if begin < lo or end > hi:
            continue
        inside = [i for i, (s, e) in enumerate(offsets) if s < end and e > begin]
        if inside:
            starts.append(first + inside[0])
            ends.append(first + inside[-1])
    return tuple(starts), tuple(ends)
