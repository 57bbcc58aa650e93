"""The sessions a reader is scored on, with their gold, without torch: the training
conversations' kept-out cases (one in eight by a hash of the id, never trained on) and the
blind sets' dev halves (checking only, never fitting)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factledger.bench.evalsets.cases import DOMAINS, LIST_FIELDS, load_cases
from factledger.bench.judgement.conversations import load_training_cases
from factledger.bench.judgement.qa_reader.pairs import kept_out
from factledger.bench.judgement.qa_reader.scoring import GoldKeywords, GoldSpan


@dataclass(frozen=True, slots=True)
class Session:
    case_id: str
    index: int
    lines: tuple[tuple[str, str], ...]
    fields: tuple[str, ...]
    lists: dict[str, bool]


def kept_out_sessions(corpora: Sequence[Path]) -> tuple[list[Session], list[GoldSpan]]:
    sessions: list[Session] = []
    gold: list[GoldSpan] = []
    for case in load_training_cases(corpora).cases:
        if not kept_out(case.id):
            continue
        lists = {f: case.is_list(f) for f in case.fields}
        for n, s in enumerate(case.sessions):
            sessions.append(Session(case.id, n, s.lines, tuple(case.fields), lists))
            gold.extend(
                GoldSpan(
                    case.id,
                    n,
                    p.span.line,
                    str(p.span.field),
                    p.span.start,
                    p.span.start + len(p.span.text),
                )
                for p in s.proposals
            )
    return sessions, gold


def blind_sessions(directory: Path) -> tuple[list[Session], list[GoldKeywords]]:
    sessions: list[Session] = []
    gold: list[GoldKeywords] = []
    for case in load_cases(directory):
        fields = DOMAINS[case.domain][1]
        lists = {f: f in LIST_FIELDS for f in fields}
        key = f"{case.writer}:{case.id}"
        for n, s in enumerate(case.sessions):
            sessions.append(Session(key, n, s.lines, fields, lists))
            gold.extend(GoldKeywords(key, n, p.field, p.keywords) for p in s.proposals)
    return sessions, gold
