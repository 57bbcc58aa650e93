"""`QaFieldReader`: which profile field each of the subject's lines states and the words of
its value, read by the one-pass QA reader (ADR 0106, 0107).

The packaged file (ADR 0213) is the reader of ADR 0146 trained one epoch more, from its own
int8 file, on the project's labelled conversations and thirteen blind sets' converted dev halves
(`bench/judgement/qa_reader`), exported to ONNX and quantised to int8 (23.2 MB); its
SHA-256 is checked when the reader is made, before anything parses it, and the graph is built
on the first line read, in a worker thread: extraction runs in the sync worker, never on a
request. An answer is kept when its span's score beats "no value" by at least the floor,
chosen on the training conversations' kept-out cases (ADR 0107).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.onnx.model_files import TOKENIZER, TOKENIZER_SHA256
from factledger.adapters.first_use import built_at_first_use
from factledger.adapters.judgement.onnx_graph import LoadedGraph, one_thread_session
from factledger.adapters.judgement.qa_reader.decode import Answer, answers
from factledger.adapters.judgement.qa_reader.field_floors import FieldFloors
from factledger.adapters.judgement.qa_reader.inputs import LineWindow, batch_arrays, line_windows
from factledger.adapters.pinned_files import read_pinned
from factledger.application.judgement.types import FieldStatement
from factledger.application.sentences import sentences
from factledger.domain.transcript import Message, Role

PACKAGED_QA_READER = Path(__file__).parent.parent / "weights" / "qa-reader-int8.onnx"
PACKAGED_QA_READER_SHA256 = "4869c91480793069f5d2ebec0070f4b13a8b190320e541d2d372aa9d20834d91"
# The lowest margin over "no value" at which the kept-out cases' line-level precision reaches
# 0.85 (ADR 0107: the rule written down before the blind dev halves were read; `python -m
# factledger.bench.judgement.qa_reader.floor`), fitted for an earlier file. This file (ADR
# 0213, as ADR 0146's before it) keeps those floors below: the rules that adopted each judged
# it at them, on writers no model had read (by ADR 0107's rule on every writer's kept-out
# cases its own floor would be 5.5, list 8.0).
PACKAGED_QA_READER_FLOOR = 5.5
# The same rule over list fields' answers alone (ADR 0113): a list field proposes every answer
# that clears its floor, so a negation or a pleasantry read as a value costs more there.
PACKAGED_QA_READER_LIST_FLOOR = 6.0
# With each list span measured by all the line's items (ADR 0129), the lowest floor at which
# the kept-out list answers are at least as precise as at the list floor above (0.741 against
# 0.729: `python -m factledger.bench.judgement.qa_reader.floor --spread-lists`).
PACKAGED_QA_READER_SPREAD_LIST_FLOOR = 7.5
# A single-valued field the subject holds a statement of already, where a session stating it
# again is where an update is said: the lowest floor of ADR 0128's grid that cost the blind
# dev halves no more than 0.005 of precision.
PACKAGED_QA_READER_HELD_FLOOR: float | None = 4.5
# The same file read one window at a time (`QaFieldReader.alone`, ADR 0156): its margins are
# the line's own, not its run's, so its floors were chosen again on reads made alone, by the
# same rules (ADR 0107, 0113 and 0128 on the kept-out cases, each on its tool's grid).
PACKAGED_QA_READER_ALONE_FLOOR = 4.5
PACKAGED_QA_READER_ALONE_LIST_FLOOR = 8.0
PACKAGED_QA_READER_ALONE_HELD_FLOOR: float | None = 3.5
# How far under the best pair's score a wider span holding it may score and still be a
# single-valued field's answer (ADR 0227, `decode.answers`): the slack of the grid 0, 0.25,
# ..., 1.5 whose answers best match the kept-out cases' labelled spans word for word (mean F1
# 0.905 against 0.896 at none: `python -m factledger.bench.judgement.qa_reader.span_slack`).
PACKAGED_QA_READER_SPAN_SLACK = 0.5
# The reader was trained asking 9-12 fields at once; a kind with more is asked them in groups,
# so that the fields' words and the line stay well inside the encoder's 512 positions.
FIELDS_PER_PASS = 24


class QaReaderIntegrityError(RuntimeError):
    """The reader's file or tokenizer is missing or differs from its pinned SHA-256."""


@dataclass(frozen=True, slots=True)
class LineRead:
    """A subject line to read: its message index, its text, the agent's line before it."""

    index: int
    text: str
    agent: str


def agent_lines(transcript: Sequence[Message], indexes: Collection[int]) -> list[LineRead]:
    """The last sentence of each line at `indexes` that the subject did not say (read alone:
    the reply after it answers that question, ADR 0138)."""
    out = []
    for i in sorted(indexes):
        if not 0 <= i < len(transcript) or transcript[i].role is Role.SUBJECT:
            continue
        if said := sentences(transcript[i].text):
            out.append(LineRead(i, said[-1], ""))
    return out


def agent_before(transcript: Sequence[Message], index: int) -> str:
    """The line before line `index` when someone other than the subject said it, else ""."""
    before = transcript[index - 1] if 0 < index <= len(transcript) else None
    return before.text if before is not None and before.role is not Role.SUBJECT else ""


def subject_lines(transcript: Sequence[Message]) -> list[LineRead]:
    """The subject's non-empty lines, each with the line before it when someone else said it."""
    return [
        LineRead(i, message.text, agent_before(transcript, i))
        for i, message in enumerate(transcript)
        if message.role is Role.SUBJECT and message.text.strip()
    ]


BATCH = 16


def sorted_batches(lengths: Sequence[int]) -> list[list[int]]:
    """The windows sorted by length, `BATCH` to a run, each padded to its run's longest.

    The int8 graph quantises each layer's activations with a scale taken from the whole run,
    so a line's margins move with the other lines of its session (ADR 0155 measured it; its
    test is marked as the known defect of this default; `QaFieldReader.alone` reads each
    window on its own, ADR 0156)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[b : b + BATCH] for b in range(0, len(order), BATCH)]


def windows_alone(lengths: Sequence[int]) -> list[list[int]]:
    """Each window in a run of its own: no padding and no activation range shared with another
    line's window, so a line's margins are a function of the line, its agent line and the
    fields asked (ADR 0155's candidate A, ADR 0156)."""
    return [[i] for i in range(len(lengths))]


# Which windows run together, by their token counts; module-level so that the lab can read
# the reader with other batchings (`bench.judgement.qa_reader.batching`, ADR 0155).
window_batches: Callable[[Sequence[int]], list[list[int]]] = sorted_batches


def as_shipped(model: bytes) -> bytes:
    """The pinned file's graph as it is, its activations quantised per run."""
    return model


# The graph a session runs, made from the pinned file's bytes; module-level for the same
# reason (the lab reads the reader with its activations in float, ADR 0155).
session_graph: Callable[[bytes], bytes] = as_shipped


@dataclass(frozen=True, slots=True)
class FieldAnswer:
    """Words of line `index` (characters `start` to `end`) that state `field`, `margin` over
    "no value"."""

    index: int
    field: str
    start: int
    end: int
    value: str
    margin: float


Answers = dict[tuple[int, str, int, int], FieldAnswer]


def keep_best(best: Answers, line: LineRead, name: str, found: Answer) -> None:
    """Keeps `found` for `name` in `line` unless the same words were found at a higher margin
    (an answer read in two overlapping windows is one answer, at its best)."""
    key = (line.index, name, found.start, found.end)
    if key not in best or found.margin > best[key].margin:
        value = line.text[found.start : found.end]
        best[key] = FieldAnswer(line.index, name, found.start, found.end, value, found.margin)


@dataclass(slots=True, weakref_slot=True)
class QaFieldReader:
    """Reads lines with the model in `model` (checked against its pin by `load`); a list
    field's answers are kept from `list_floor` (None: from `floor`); a single-valued field
    the subject holds a statement of already, from `held_floor` (None: from `floor`; ADR
    0128)."""

    model: bytes
    floor: float
    list_floor: float | None = None
    held_floor: float | None = None
    # A list field's spans measured by the mass of all its items (ADR 0129, `decode.answers`).
    spread_lists: bool = False
    field_floors: FieldFloors | None = None
    # Each window read alone (ADR 0156) rather than batched by `window_batches`; the floors
    # must be ones chosen on reads made so.
    alone: bool = False
    # A list field's span cut where the reader reads one item end and the next begin (ADR
    # 0162, `decode.cuts`): read off the same scores, so the floors stay the file's.
    cut_lists: bool = False
    # A single-valued field's answer widened to the widest span in its sentence scoring within
    # this of the best (ADR 0227, `decode.answers`); 0: the best pair as it is.
    span_slack: float = 0.0
    _loaded: LoadedGraph | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        built_at_first_use(self._ready, "qa_reader")

    @classmethod
    def load(
        cls,
        path: Path,
        sha256: str | None,
        floor: float,
        list_floor: float | None = None,
        held_floor: float | None = None,
        *,
        spread_lists: bool = False,
        field_floors: FieldFloors | None = None,
        alone: bool = False,
        cut_lists: bool = False,
        span_slack: float = 0.0,
    ) -> QaFieldReader:
        raw = read_pinned(path, sha256, QaReaderIntegrityError, "QA reader file")
        read_pinned(TOKENIZER, TOKENIZER_SHA256, QaReaderIntegrityError, "tokenizer")
        if field_floors is not None and field_floors.reader_sha256 != sha256:
            # Margins are one file's: floors fitted on another reader's mean nothing here.
            raise QaReaderIntegrityError(
                f"field floors were fitted for another reader than {path.name}"
            )
        return cls(
            raw,
            floor,
            list_floor,
            held_floor,
            spread_lists,
            field_floors,
            alone,
            cut_lists,
            span_slack,
        )

    @classmethod
    def packaged(
        cls,
        *,
        spread_lists: bool = False,
        alone: bool = False,
        cut_lists: bool = False,
        span_slack: float = PACKAGED_QA_READER_SPAN_SLACK,
    ) -> QaFieldReader:
        """The shipped file at its floors and span slack: read alone, at the floors chosen
        on reads made alone (the spread list floor was not chosen again and is kept)."""
        if spread_lists:
            list_floor = PACKAGED_QA_READER_SPREAD_LIST_FLOOR
        elif alone:
            list_floor = PACKAGED_QA_READER_ALONE_LIST_FLOOR
        else:
            list_floor = PACKAGED_QA_READER_LIST_FLOOR
        return cls.load(
            PACKAGED_QA_READER,
            PACKAGED_QA_READER_SHA256,
            PACKAGED_QA_READER_ALONE_FLOOR if alone else PACKAGED_QA_READER_FLOOR,
            list_floor,
            PACKAGED_QA_READER_ALONE_HELD_FLOOR if alone else PACKAGED_QA_READER_HELD_FLOOR,
            spread_lists=spread_lists,
            alone=alone,
            cut_lists=cut_lists,
            span_slack=span_slack,
        )

    def floor_of(
        self,
        field_name: str,
        lists: Collection[str],
        held: Collection[str] = (),
        held_floor: float | None = None,
    ) -> float:
        """The bar of a field's answers; `held_floor`, when given, replaces the held floor."""
        is_list = field_name in lists
        own = (
            None if self.field_floors is None else self.field_floors.of(field_name, is_list=is_list)
        )
        if is_list:
            kind_floor = self.floor if self.list_floor is None else self.list_floor
            return kind_floor if own is None else own
        held_bar = self.held_floor if held_floor is None else held_floor
        if field_name in held and held_bar is not None:
            # A held field is where an update is said: its own floor lowers the bar, never
            # raises it above the held one.
            return held_bar if own is None else min(held_bar, own)
        return self.floor if own is None else own

    def _ready(self) -> LoadedGraph:
        with self._lock:
            if self._loaded is None:
                from tokenizers import Tokenizer

                session = one_thread_session(session_graph(self.model))
                raw = read_pinned(TOKENIZER, TOKENIZER_SHA256, QaReaderIntegrityError, "tokenizer")
                tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._loaded = LoadedGraph(session, tokenizer)
                self.model = b""  # the session holds the graph now
            return self._loaded

    def answers_sync(
        self,
        lines: Sequence[LineRead],
        fields: Sequence[str],
        lists: Collection[str] = (),
        floor: float | None = None,
        held: Collection[str] = (),
        held_floor: float | None = None,
        reach: float = 0.0,
        reaching: Collection[str] = (),
    ) -> list[FieldAnswer]:
        """Every answer of every field that clears its floor (a field may have several in a
        line, best first; `lists`, the list fields among `fields`, clear the list floor;
        `held`, the single-valued fields the subject holds, the held floor or `held_floor`;
        `floor`, when given, is every field's; the fields in `reaching` are read `reach`
        under their bar, for a reader of their answers to judge, ADR 0211); an answer found
        in two overlapping windows once, at its best."""
        if not lines or not fields:
            return []
        loaded = self._ready()
        groups = [
            tuple(fields[i : i + FIELDS_PER_PASS]) for i in range(0, len(fields), FIELDS_PER_PASS)
        ]
        items: list[tuple[LineRead, tuple[str, ...], LineWindow]] = [
            (line, group, w)
            for line in lines
            for group in groups
            for w in line_windows(loaded.tokenizer, group, line.text, line.agent)
        ]
        best: Answers = {}
        plan = windows_alone if self.alone else window_batches
        for batch in plan([len(w.ids) for _, _, w in items]):
            chunk = [items[i] for i in batch]
            start, end = loaded.session.run(None, batch_arrays([w for _, _, w in chunk]))
            for row, (line, group, w) in enumerate(chunk):
                n = len(w.ids)
                for f, name in enumerate(group):
                    for a in answers(
                        np.asarray(start[row, f, :n]),
                        np.asarray(end[row, f, :n]),
                        w.first_line_token,
                        w.offsets,
                        line.text,
                        margin=(
                            self.floor_of(name, lists, held, held_floor) if floor is None else floor
                        )
                        - (reach if name in reaching else 0.0),
                        many=True,
                        spread=self.spread_lists and name in lists,
                        items=self.cut_lists and name in lists,
                        slack=0.0 if name in lists else self.span_slack,
                    ):
                        keep_best(best, line, name, a)
        return list(best.values())

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        floor: float | None = None,
        held: Collection[str] = (),
        held_floor: float | None = None,
        reach: float = 0.0,
        reaching: Collection[str] = (),
    ) -> list[FieldStatement]:
        """The words of the subject's lines that state each of `fields`; `p` is the answer's
        margin over "no value" (at least its floor, the held floor or `held_floor` for
        `held`, or `floor` when given; `reach` under it for the fields in `reaching`)."""
        return await self._statements(
            subject_lines(transcript), fields, lists, floor, held, held_floor, reach, reaching
        )

    async def read_backs(
        self,
        transcript: Sequence[Message],
        indexes: Collection[int],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
        floor: float | None = None,
    ) -> list[FieldStatement]:
        """Implements `ReadBackReader`: the words of the last sentence of each agent line at
        `indexes` that state each of `fields`, at the fields' floors (or `floor`), read as
        the subject's lines are (with no line before them)."""
        return await self._statements(agent_lines(transcript, indexes), fields, lists, floor, held)

    async def _statements(
        self,
        lines: list[LineRead],
        fields: Sequence[str],
        lists: Collection[str],
        floor: float | None,
        held: Collection[str],
        held_floor: float | None = None,
        reach: float = 0.0,
        reaching: Collection[str] = (),
    ) -> list[FieldStatement]:
        """`answers_sync` of `lines` off the event loop, as statements."""
        if not lines or not fields:
            return []
        found = await asyncio.to_thread(
            self.answers_sync,
            lines,
            list(fields),
            frozenset(lists),
            floor,
            frozenset(held),
            held_floor,
            reach,
            frozenset(reaching),
        )
        return [FieldStatement(a.index, a.value, a.field, a.margin) for a in found]
