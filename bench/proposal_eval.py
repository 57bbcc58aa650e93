"""Scores the product's proposer (extractor -> fields -> plan -> ledger) on a labelled set of
multi-session conversations (`tests/data/proposal_set.yaml`).

Each case registers a subject of its kind, records its sessions in order and lets the
`SessionProposer` review each one; a session may be followed by a reviewer approving the
pending change of some fields, so later sessions are weighed against a profile.

- A proposal matches an expected one when it comes from the same session, for the same field,
  and every expected keyword occurs in its value (case-insensitive); one-to-one, in order.
- Precision and recall count proposals; origin accuracy and condition preservation (the
  expected condition kept verbatim) are measured on matched pairs.
- Wrong field: a proposal that matches an expected one of its session in every way but the
  field. Duplicates: two proposals of one case with the same field and value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from factledger.adapters.in_memory.event_store import popo_env
from factledger.application.ledger.commands import (
    ApproveChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.ports import Extractor
from factledger.application.review.proposer import SessionProposer
from factledger.domain.events import SessionRecorded
from factledger.domain.proposal import Proposal
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import render
from factledger.testing.manual_clock import ManualClock

TENANT = "eval"
START = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)
MODEL = Actor(ActorKind.MODEL, "eval@1")


@dataclass(frozen=True, slots=True)
class ExpectedProposal:
    session: int  # index of the session it comes from
    field: str
    keywords: tuple[str, ...]
    origin: Origin = Origin.STATED
    condition: str | None = None


@dataclass(frozen=True, slots=True)
class ProposalCase:
    id: str
    tags: tuple[str, ...]
    kind: str
    sessions: tuple[tuple[tuple[Role, str], ...], ...]
    approve_after: Mapping[int, tuple[str, ...]]
    expected: tuple[ExpectedProposal, ...]


@dataclass(frozen=True, slots=True)
class Made:
    session: int
    proposal: Proposal

    @property
    def value(self) -> str:
        return "" if self.proposal.value is None else render(self.proposal.value)


@dataclass(frozen=True, slots=True)
class ProposalResult:
    case: ProposalCase
    made: tuple[Made, ...]
    pairs: tuple[tuple[ExpectedProposal, Made], ...]
    missed: tuple[ExpectedProposal, ...]
    extra: tuple[Made, ...]
    wrong_field: int
    duplicates: int


@dataclass(frozen=True, slots=True)
class ProposalScores:
    results: tuple[ProposalResult, ...] = field(default=())

    def _sum(self, attr: str) -> int:
        return sum(len(getattr(r, attr)) for r in self.results)

    @property
    def precision(self) -> float:
        made = self._sum("made")
        return self._sum("pairs") / made if made else 1.0

    @property
    def recall(self) -> float:
        expected = sum(len(r.case.expected) for r in self.results)
        return self._sum("pairs") / expected if expected else 1.0

    @property
    def origin_accuracy(self) -> float:
        pairs = [p for r in self.results for p in r.pairs]
        hits = sum(e.origin is m.proposal.origin for e, m in pairs)
        return hits / len(pairs) if pairs else 1.0

    @property
    def condition_preservation(self) -> float:
        pairs = [p for r in self.results for p in r.pairs if p[0].condition is not None]
        hits = sum(e.condition == m.proposal.condition for e, m in pairs)
        return hits / len(pairs) if pairs else 1.0

    @property
    def wrong_field_rate(self) -> float:
        made = self._sum("made")
        return sum(r.wrong_field for r in self.results) / made if made else 0.0

    @property
    def duplicates(self) -> int:
        return sum(r.duplicates for r in self.results)

    def line(self, name: str) -> str:
        return (
            f"{name}: cases={len(self.results)} precision={self.precision:.2f}"
            f" recall={self.recall:.2f} origin={self.origin_accuracy:.2f}"
            f" condition={self.condition_preservation:.2f}"
            f" wrong_field={self.wrong_field_rate:.2f} duplicates={self.duplicates}"
        )


def parse_cases(raw: Sequence[Mapping[str, Any]]) -> list[ProposalCase]:
    cases = []
    for doc in raw:
        sessions = tuple(
            tuple((Role(role), str(text)) for line in s for role, text in line.items())
            for s in doc["sessions"]
        )
        expected = tuple(
            ExpectedProposal(
                session=int(e["session"]),
                field=str(e["field"]),
                keywords=tuple(str(k) for k in e.get("keywords", ())),
                origin=Origin(e.get("origin", "stated")),
                condition=e.get("condition"),
            )
            for e in doc.get("expected", ())
        )
        approve = {int(k): tuple(v) for k, v in (doc.get("approve_after") or {}).items()}
        cases.append(
            ProposalCase(
                id=str(doc["id"]),
                tags=tuple(doc.get("tags", ())),
                kind=str(doc.get("kind", "lead")),
                sessions=sessions,
                approve_after=approve,
                expected=expected,
            )
        )
    return cases


def _matches(expected: ExpectedProposal, made: Made, *, same_field: bool = True) -> bool:
    value = made.value.lower()
    return (
        expected.session == made.session
        and (expected.field == made.proposal.field) is same_field
        and all(k.lower() in value for k in expected.keywords)
    )


def _score(case: ProposalCase, made: list[Made]) -> ProposalResult:
    pairs, missed, left = [], [], list(made)
    for expected in case.expected:
        hit = next((m for m in left if _matches(expected, m)), None)
        if hit is None:
            missed.append(expected)
        else:
            pairs.append((expected, hit))
            left.remove(hit)
    wrong = sum(any(_matches(e, m, same_field=False) for e in missed) for m in left)
    seen = [(m.proposal.field, m.value.lower()) for m in made]
    return ProposalResult(
        case,
        tuple(made),
        tuple(pairs),
        tuple(missed),
        tuple(left),
        wrong,
        len(seen) - len(set(seen)),
    )


async def run_case(case: ProposalCase, extractor: Extractor) -> ProposalResult:
    clock = ManualClock(START)
    ledger = Ledger(popo_env(), clock=clock)
    try:
        proposer = SessionProposer(ledger, extractor, MODEL)
        subject_id = ledger.register_subject(RegisterSubject(TENANT, case.kind, case.id)).subject_id
        made: list[Made] = []
        for n, lines in enumerate(case.sessions):
            at = START + timedelta(days=21 * n)
            clock.set(at)
            transcript = tuple(Message(role, text, at) for role, text in lines)
            sid = f"{case.id}-s{n}"
            ledger.record_session(
                RecordSession(TENANT, subject_id, sid, Channel.CHAT, at, at, transcript)
            )
            before = set(ledger.subject(TENANT, subject_id).changes)
            await proposer.review(TENANT, _recorded(ledger, subject_id, sid))
            subject = ledger.subject(TENANT, subject_id)
            made += [Made(n, c.proposal) for i, c in subject.changes.items() if i not in before]
            for field_name in case.approve_after.get(n, ()):
                pending = [
                    c
                    for c in subject.changes.values()
                    if c.field == field_name and c.status is ChangeStatus.PENDING
                ]
                for change in pending:
                    ledger.approve_change(ApproveChange(TENANT, subject_id, change.change_id, "r"))
        return _score(case, made)
    finally:
        ledger.close()


def _recorded(ledger: Ledger, subject_id: Any, session_id: str) -> SessionRecorded:
    for event in ledger.repository.event_store.get(subject_id):
        if isinstance(event, SessionRecorded) and event.session_id == session_id:
            return event
    raise LookupError(session_id)


async def evaluate(extractor: Extractor, cases: Sequence[ProposalCase]) -> ProposalScores:
    return ProposalScores(tuple([await run_case(c, extractor) for c in cases]))
