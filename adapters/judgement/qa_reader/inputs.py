"""A line as the one-pass reader reads it: `[CLS] [F] name [F] job title ... [SEP] line [SEP]
agent's line [SEP]` (`[F]` is `MARKER`). Each field asks with the mean state of its marker and
its own words (`pool`); only the line's tokens can be a value, `[CLS]` means none. A line
longer than the budget is read in overlapping windows. The lab trains on exactly these inputs
(`bench/judgement/qa_reader/fields_pass.py`), so a change here is a change of the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MAX_TOKENS = 128
MAX_AGENT = 20
MARKER = "[unused1]"
# A field asks with at most this many of its words' tokens (the corpus's names have at most
# five), so that a pass of `reader.FIELDS_PER_PASS` fields stays inside the encoder's 512.
MAX_FIELD_TOKENS = 8


def field_words(field: str) -> str:
    """The words a field asks with: its name, underscores as spaces."""
    return field.replace("_", " ").strip()


def special_id(tokenizer: Tokenizer, token: str) -> int:
    found = tokenizer.token_to_id(token)
    if found is None:
        raise ValueError(f"the tokenizer has no {token} token")
    return int(found)


def windows(length: int, width: int) -> list[int]:
    """Where each window of `width` tokens begins; they overlap by half."""
    if length <= width:
        return [0]
    stride = max(1, width // 2)
    return [*range(0, length - width, stride), length - width]


@dataclass(frozen=True, slots=True)
class LineWindow:
    """One input: a window of a line with every field asked before it."""

    ids: tuple[int, ...]
    types: tuple[int, ...]
    markers: tuple[int, ...]  # each field's marker position, in the order asked
    first_line_token: int
    offsets: tuple[tuple[int, int], ...]  # the window's tokens' character offsets in the line

    def field_positions(self) -> tuple[tuple[int, ...], ...]:
        return field_positions(self.markers, self.first_line_token)


def field_positions(markers: Sequence[int], first_line_token: int) -> tuple[tuple[int, ...], ...]:
    """Per field: its marker's position and its words' (up to the next marker or [SEP])."""
    ends = (*markers[1:], first_line_token - 1)
    return tuple(tuple(range(m, end)) for m, end in zip(markers, ends, strict=True))


def line_windows(
    tokenizer: Tokenizer,
    fields: Sequence[str],
    line: str,
    agent: str,
    max_tokens: int = MAX_TOKENS,
) -> list[LineWindow]:
    """The inputs that read `line` (after the agent's `agent`, "" for none) for `fields`."""
    cls, sep, mark = (special_id(tokenizer, t) for t in ("[CLS]", "[SEP]", MARKER))
    prefix: list[int] = [cls]
    markers = []
    for field in fields:
        markers.append(len(prefix))
        words = tokenizer.encode(field_words(field), add_special_tokens=False).ids
        prefix += [mark, *words[:MAX_FIELD_TOKENS]]
    prefix.append(sep)
    said = tokenizer.encode(line, add_special_tokens=False)
    asked = tokenizer.encode(agent, add_special_tokens=False).ids[-MAX_AGENT:] if agent else []
    room = max_tokens - len(prefix) - 2
    width = max(8, min(len(said.ids), room))
    # The agent's line is cut from its start: its end is what the subject answers.
    asked = asked[max(0, len(asked) - max(0, room - width)) :] if room - width > 0 else []
    out = []
    for begin in windows(len(said.ids), width):
        body = [*said.ids[begin : begin + width], sep, *([*asked, sep] if asked else [])]
        out.append(
            LineWindow(
                ids=(*prefix, *body),
                types=(0,) * len(prefix) + (1,) * len(body),
                markers=tuple(markers),
                first_line_token=len(prefix),
                offsets=tuple((int(x), int(y)) for x, y in said.offsets[begin : begin + width]),
            )
        )
    return out


Ids = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]


def batch_arrays(batch: Sequence[LineWindow]) -> dict[str, Ids | Floats]:
    """The graph's inputs for windows asking the same number of fields, padded to the
    longest: `ids`, `types`, `attention` and `pool` (each field's share of its query)."""
    width = max(len(w.ids) for w in batch)
    fields = max(len(w.markers) for w in batch)
    ids = np.zeros((len(batch), width), dtype=np.int64)
    types = np.zeros_like(ids)
    attention = np.zeros_like(ids)
    pool = np.zeros((len(batch), fields, width), dtype=np.float32)
    for row, w in enumerate(batch):
        n = len(w.ids)
        ids[row, :n], types[row, :n], attention[row, :n] = w.ids, w.types, 1
        for f, positions in enumerate(w.field_positions()):
            pool[row, f, list(positions)] = 1.0 / len(positions)
    return {"ids": ids, "types": types, "attention": attention, "pool": pool}
