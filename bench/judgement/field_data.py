"""The field head's examples: every subject clause of labelled conversations, with its pairs.

Conversations come in the blind sets' format (`cases-*.yaml`). A pair is positive when an
expected stated proposal of its session is for that field and the clause holds every one of
its keywords. The fields offered are the case's domain fields when the domain is one of the
six, else every field its kind's expectations name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.bench.evalsets.cases import DOMAINS, Case, Session, load_cases
from factledger.domain.transcript import Message, Role

_ROLES = {"agent": Role.AGENT, "subject": Role.SUBJECT, "staff": Role.STAFF}


def cases_in(directories: Sequence[Path]) -> list[Case]:
    return [c for d in directories for c in load_cases(d)]


def fields_by_kind(cases: Sequence[Case]) -> dict[str, tuple[str, ...]]:
    named: dict[str, set[str]] = defaultdict(set)
    for case in cases:
        for session in case.sessions:
            named[case.kind] |= {p.field for p in session.proposals}
    known = dict(DOMAINS.values())
    return {kind: known.get(kind, tuple(sorted(f))) for kind, f in named.items()}


def transcript_of(session: Session) -> list[Message]:
    return [Message(_ROLES[r], t, session.at) for r, t in session.lines]


def _positive(session: Session, clause: str, field: str) -> bool:
    low = clause.lower()
    return any(
        p.field == field and p.origin == "stated" and all(k.lower() in low for k in p.keywords)
        for p in session.proposals
    )


@dataclass(frozen=True, slots=True)
class ClauseExample:
    """One subject clause of a labelled conversation: its pairs with its kind's fields, which
    of them it states (none, one, or several), and its case's number (folds go by case)."""

    case: int
    pairs: Matrix  # fields x pair width
    states: npt.NDArray[np.bool_]  # fields


async def field_examples(judge: LearnedJudge, cases: Sequence[Case]) -> list[ClauseExample]:
    fields = fields_by_kind(cases)
    out: list[ClauseExample] = []
    for number, case in enumerate(cases):
        kind_fields = fields.get(case.kind, ())
        if not kind_fields:
            continue
        for session in case.sessions:
            said, pairs = await judge.pairs(transcript_of(session), kind_fields)
            for c, (_, clause) in enumerate(said):
                states = np.array([_positive(session, clause, f) for f in kind_fields])
                out.append(ClauseExample(number, pairs[c], states))
    return out
