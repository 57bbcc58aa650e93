"""The field head's examples: every (subject clause, field) pair of labelled conversations.

Conversations come in the blind sets' format (`cases-*.yaml`). A pair is positive when an
expected stated proposal of its session is for that field and the clause holds every one of
its keywords. The fields offered are the case's domain fields when the domain is one of the
six, else every field its kind's expectations name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

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


async def field_examples(
    judge: LearnedJudge, cases: Sequence[Case]
) -> tuple[Matrix, list[str], list[int]]:
    """Pair features, labels ("true"/"false") and each pair's case number (for folds)."""
    fields = fields_by_kind(cases)
    rows: list[Matrix] = []
    labels: list[str] = []
    groups: list[int] = []
    for number, case in enumerate(cases):
        kind_fields = fields.get(case.kind, ())
        for session in case.sessions:
            said, pairs = await judge.pairs(transcript_of(session), kind_fields)
            if not said or not kind_fields:
                continue
            rows.append(pairs.reshape(len(said) * len(kind_fields), -1))
            labels += [
                str(_positive(session, clause, f)).lower()
                for _, clause in said
                for f in kind_fields
            ]
            groups += [number] * (len(said) * len(kind_fields))
    if not rows:
        return np.zeros((0, 0), dtype=np.float32), [], []
    return np.vstack(rows), labels, groups
