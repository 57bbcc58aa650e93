"""The span tagger's examples: every subject line of the labelled training conversations, its
tokens as the tagger reads them, and which field's value each token belongs to (the tokens a
stated proposal's `span` covers)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.bench.judgement.conversations import TrainingCase, TrainingSession
from factledger.bench.judgement.field_data import ClauseExample
from factledger.domain.transcript import Message, Role

_ROLES = {"agent": Role.AGENT, "subject": Role.SUBJECT, "staff": Role.STAFF}
QUIET_LINES_KEPT = 3  # one line in this many that states no field is kept (they outnumber)


@dataclass(frozen=True, slots=True)
class LineExample:
    case: int
    pairs: Matrix  # tokens x fields x pair width
    tokens: Matrix  # tokens x token width
    states: npt.NDArray[np.bool_]  # tokens x fields: the token is part of that field's value
    known: npt.NDArray[np.bool_]  # tokens: False where the label is unsure (an inferred span)


def transcript_of(session: TrainingSession, case: TrainingCase) -> list[Message]:
    at = case_time(case)
    return [Message(_ROLES.get(r, Role.AGENT), t, at) for r, t in session.lines]


def case_time(case: TrainingCase) -> datetime:
    """The time messages are stamped with: the tagger does not read it."""
    return datetime(2026, 1, 1, tzinfo=UTC)


def _kept(case: TrainingCase, index: int) -> bool:
    return zlib.crc32(f"{case.id}:{index}".encode()) % QUIET_LINES_KEPT == 0


async def line_examples(judge: LearnedJudge, cases: Sequence[TrainingCase]) -> list[LineExample]:
    out: list[LineExample] = []
    for number, case in enumerate(cases):
        fields = list(case.fields)
        for s, session in enumerate(case.sessions):
            readings = await judge.line_readings(transcript_of(session, case), fields)
            for index, tokens, reading in readings:
                n = len(tokens.words)
                states = np.zeros((n, len(fields)), dtype=bool)
                known = np.ones(n, dtype=bool)
                for p in session.proposals:
                    if p.span.line != index or p.span.field is None:
                        continue
                    a, b = p.span.start, p.span.start + len(p.span.text)
                    inside = (tokens.offsets[:, 0] < b) & (tokens.offsets[:, 1] > a)
                    if p.origin == "stated":
                        states[inside, fields.index(p.span.field)] = True
                    else:
                        known &= ~inside
                if not states.any() and not _kept(case, s * 1000 + index):
                    continue
                out.append(LineExample(number, reading.pairs, reading.tokens, states, known))
    return out


async def clause_examples(
    judge: LearnedJudge, cases: Sequence[TrainingCase], first_case: int = 0
) -> list[ClauseExample]:
    """The field head's examples from training conversations: a clause states a field when
    it overlaps a stated proposal's span of that field on its line."""
    out: list[ClauseExample] = []
    for number, case in enumerate(cases, start=first_case):
        fields = list(case.fields)
        for session in case.sessions:
            said, pairs = await judge.pairs(transcript_of(session, case), fields)
            cursor: dict[int, int] = {}
            for c, (index, clause) in enumerate(said):
                line = session.lines[index][1]
                start = line.find(clause, cursor.get(index, 0))
                start = max(start, 0)
                end = start + len(clause)
                cursor[index] = end
                states = np.zeros(len(fields), dtype=bool)
                for p in session.proposals:
                    a, b = p.span.start, p.span.start + len(p.span.text)
                    if p.span.line == index and p.origin == "stated" and a < end and b > start:
                        states[fields.index(str(p.span.field))] = True
                out.append(ClauseExample(number, pairs[c], states))
    return out
