"""A student reader's graph (`student_export.py`) read without torch, as the product reads the
shipped one (`adapters/judgement/qa_reader/reader.py`): the same answers for the same lines and
fields, with the same decoding and floors.

A line is `[CLS] line [SEP] agent's line [SEP]`, a longer line read in overlapping windows; a
field's queries are made once from `[CLS] field words [SEP]` and kept for the reader's life (a
kind asks the same fields of every session).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from factledger.adapters.judgement.onnx_graph import one_thread_session
from factledger.adapters.judgement.qa_reader.decode import answers
from factledger.adapters.judgement.qa_reader.inputs import (
    MAX_AGENT,
    MAX_TOKENS,
    field_words,
    special_id,
    windows,
)
from factledger.adapters.judgement.qa_reader.reader import (
    Answers,
    FieldAnswer,
    LineRead,
    keep_best,
)

if TYPE_CHECKING:
    import onnxruntime as ort

BATCH = 16
FIRST_LINE_TOKEN = 1  # after [CLS]

Ids = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class LineInput:
    """One input: a window of a line, then the agent's line before it."""

    ids: tuple[int, ...]
    types: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]  # the window's tokens' character offsets in the line


def line_inputs(
    tokenizer: Tokenizer, line: str, agent: str, max_tokens: int = MAX_TOKENS
) -> list[LineInput]:
    """The inputs that read `line` after the agent's `agent` ("" for none)."""
    cls, sep = special_id(tokenizer, "[CLS]"), special_id(tokenizer, "[SEP]")
    said = tokenizer.encode(line, add_special_tokens=False)
    asked = tokenizer.encode(agent, add_special_tokens=False).ids[-MAX_AGENT:] if agent else []
    room = max_tokens - 3
    width = max(8, min(len(said.ids), room))
    # The agent's line is cut from its start: its end is what the subject answers.
    asked = asked[max(0, len(asked) - max(0, room - width)) :] if room - width > 0 else []
    out = []
    for begin in windows(len(said.ids), width):
        head = [cls, *said.ids[begin : begin + width], sep]
        tail = [*asked, sep] if asked else []
        out.append(
            LineInput(
                ids=(*head, *tail),
                types=(0,) * len(head) + (1,) * len(tail),
                offsets=tuple((int(x), int(y)) for x, y in said.offsets[begin : begin + width]),
            )
        )
    return out


def field_input(tokenizer: Tokenizer, name: str) -> tuple[int, ...]:
    cls, sep = special_id(tokenizer, "[CLS]"), special_id(tokenizer, "[SEP]")
    return (cls, *tokenizer.encode(field_words(name), add_special_tokens=False).ids, sep)


def batch_arrays(
    rows: Sequence[tuple[int, ...]], types: Sequence[tuple[int, ...]]
) -> dict[str, Ids]:
    """The graph's row inputs, padded to the longest row."""
    width = max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    kinds = np.zeros_like(ids)
    attention = np.zeros_like(ids)
    for i, (r, t) in enumerate(zip(rows, types, strict=True)):
        ids[i, : len(r)], kinds[i, : len(r)], attention[i, : len(r)] = r, t, 1
    return {"ids": ids, "types": kinds, "attention": attention}


@dataclass(slots=True)
class LineFieldReader:
    """Reads lines with a student graph (`model`, its serialized int8 graph; `width`, its
    states' width); floors as `QaFieldReader`'s. Each field's queries are made once."""

    model: bytes
    floor: float
    list_floor: float | None
    tokenizer: Tokenizer
    width: int = 384
    _session: ort.InferenceSession | None = field(default=None, repr=False)
    _queries: dict[str, Floats] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _ready(self) -> ort.InferenceSession:
        with self._lock:
            if self._session is None:
                self._session = one_thread_session(self.model)
                self.model = b""
            return self._session

    def queries(self, fields: Sequence[str]) -> Floats:
        """Each field's start and end queries, `[field, 2, width]`."""
        session = self._ready()
        missing = [f for f in dict.fromkeys(fields) if f not in self._queries]
        if missing:
            rows = [field_input(self.tokenizer, f) for f in missing]
            inputs: dict[str, Ids | Floats] = {**batch_arrays(rows, [(0,) * len(r) for r in rows])}
            inputs["queries"] = np.zeros((1, 2, self.width), np.float32)  # none: only `asked`
            (asked,) = session.run(["asked"], inputs)
            for f, ask in zip(missing, asked, strict=True):
                self._queries[f] = np.asarray(ask, dtype=np.float32)
        return np.stack([self._queries[f] for f in fields])

    def answers_sync(
        self,
        lines: Sequence[LineRead],
        fields: Sequence[str],
        lists: Collection[str] = (),
    ) -> list[FieldAnswer]:
        """Every answer of every field that clears its floor (`lists`: the list fields, which
        clear the list floor), each at its best."""
        if not lines or not fields:
            return []
        session = self._ready()
        queries = self.queries(fields)
        items = [
            (line, w) for line in lines for w in line_inputs(self.tokenizer, line.text, line.agent)
        ]
        items.sort(key=lambda item: len(item[1].ids))
        best: Answers = {}
        for begin in range(0, len(items), BATCH):
            chunk = items[begin : begin + BATCH]
            inputs: dict[str, Ids | Floats] = {
                **batch_arrays([w.ids for _, w in chunk], [w.types for _, w in chunk]),
                "queries": queries,
            }
            start, end = session.run(["start", "end"], inputs)
            floors = np.array([self._floor_of(f, lists) for f in fields])
            for row, (line, w) in enumerate(chunk):
                n = len(w.ids)
                for f in _may_answer(start[row], end[row], len(w.offsets), floors):
                    name, at = fields[f], float(floors[f])
                    for a in answers(
                        np.asarray(start[row, f, :n]),
                        np.asarray(end[row, f, :n]),
                        FIRST_LINE_TOKEN,
                        w.offsets,
                        line.text,
                        margin=at,
                        many=True,
                    ):
                        keep_best(best, line, name, a)
        return list(best.values())

    def _floor_of(self, name: str, lists: Collection[str]) -> float:
        if name in lists and self.list_floor is not None:
            return self.list_floor
        return self.floor


def _may_answer(start: Floats, end: Floats, said: int, floors: Floats) -> list[int]:
    """The fields whose best start and best end of the line's `said` tokens could beat "no
    value" by their floor: a bound on any span's margin, so the others are not decoded."""
    if said == 0:
        return []
    words = slice(FIRST_LINE_TOKEN, FIRST_LINE_TOKEN + said)
    bound = start[:, words].max(1) + end[:, words].max(1) - start[:, 0] - end[:, 0]
    return [int(f) for f in np.flatnonzero(bound >= floors)]
