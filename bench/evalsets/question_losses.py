"""`python -m factledger.bench.evalsets.losses --questions DIR [DIR...]`: where each question
is lost, on a blind set's **dev** half (it reads the cases; never a held-out half).

The cases are played as the scorer plays them (`run.run_case`); beside every recall the tool
keeps what recall could have offered: the same search at no threshold (current and
superseded memories), which of those hits the ledger's mask drops and by which rule, the
subject's changes and their status, and the field the question heads read as asked. Each
question whose right note is not in the top 3 is put in the first class that holds:

- `never_a_memory:*`: no memory and no change holds the answer (an extraction loss; split
  by whether a subject line, only an agent line, or no line holds it): counted only;
- `only_pending:*`: only a pending change holds it, not offered (the asked field read as
  another field, or none);
- `filtered:<rule>`: memories hold it, every one dropped (superseded in the backend, a
  replaced statement, withheld for a request to forget, forgotten, rejected);
- `below_threshold`: a current memory holds it, under the search's threshold;
- `ranked_below_3:<by what>`: a current memory over the threshold holds it, and the top 3
  went to other notes; by what the first of them is (a pending value, a confirmed field, an
  older statement holding a stale keyword, an agent line, a line the writers marked as small
  talk or a third party's, another statement of the subject).

And each stale note in the top 3 (the scorer's rule: a note holds a stale keyword as a word
and not the answer) is put in the first class that holds: a rejected value still offered;
a forgotten value (or one withheld for a pending request) still offered; a value a request
to forget concerned that the product never placed; a value a later statement replaced whose
memory was not recognised (the later one proposed for the field, or never proposed); the
writers' not-proposed kinds (a third party's, hypothetical, negated, small talk); the note of
the session that states the update, naming the old value; a pending or confirmed value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import UUID

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import MAX_LIMIT, Namespace, SearchHit
from factledger.application.recall.build import hit_session_id
from factledger.application.recall.forget_filter import ForgetMask, unforgotten
from factledger.application.recall.service import Recall, wide_query
from factledger.application.recall.turn_reads import turn_source
from factledger.application.recall.types import NoteKind, RecallResult
from factledger.bench.evalsets.cases import Case, Question
from factledger.bench.evalsets.run import CaseRun
from factledger.bench.evalsets.score import holds_all
from factledger.domain.provenance import ChangeStatus, Operation
from factledger.domain.subject import Subject
from factledger.domain.values import to_payload

TOP = 3


@dataclass(frozen=True, slots=True)
class Seen:
    """A hit of the unthresholded search, and the mask's rule that drops it (None: kept)."""

    hit: SearchHit
    dropped: str | None


@dataclass(frozen=True, slots=True)
class Change:
    field: str
    value: str
    status: ChangeStatus
    operation: Operation
    session_id: str | None
    message_index: int | None
    order: int  # when it was proposed, among the subject's changes


@dataclass(frozen=True, slots=True)
class Turn:
    """One recall as the question tool keeps it."""

    query: str
    result: RecallResult
    seen: tuple[Seen, ...]
    changes: tuple[Change, ...]
    threshold: float
    asked: str | None


@dataclass(slots=True)
class TurnRecorder:
    subject: Any = None  # (subject id) -> Subject, set by the caller per runtime
    turns: list[Turn] = field(default_factory=list)


async def _dropped(
    hit: SearchHit, mask: ForgetMask, backend: MemoryBackend, ns: Namespace
) -> str | None:
    if not hit.is_latest:
        return "superseded"
    if mask.by_id(hit.id):
        return "forgotten"
    for r in mask.replaced:
        if r.retires(hit):
            return "replaced" if r.current else "withheld_for_request"
    if any(r.withholds(hit) for r in mask.requested):
        return "withheld_for_spoken_request"
    for rule, only in (
        ("forgotten_field", replace(mask, rejections=(), memory_ids=frozenset())),
        ("rejected", replace(mask, fields=(), memory_ids=frozenset())),
    ):
        if not await unforgotten([hit], only, backend, ns):
            return rule
    return None


def _changes(subject: Subject) -> tuple[Change, ...]:
    out = []
    for order, record in enumerate(subject.changes.values()):
        p = record.proposal
        value = "" if p.value is None else " ".join(str(v) for v in _flat(to_payload(p.value)))
        session_id = p.evidence.session_id if p.evidence else None
        index = p.evidence.message_index if p.evidence else None
        out.append(Change(p.field, value, record.status, p.operation, session_id, index, order))
    return tuple(out)


def _flat(payload: object) -> Iterator[object]:
    if isinstance(payload, dict):
        for v in payload.values():
            yield from _flat(v)
    elif isinstance(payload, list | tuple):
        for v in payload:
            yield from _flat(v)
    else:
        yield payload


@contextmanager
def recall_replaced(
    recall: Callable[..., Awaitable[RecallResult]], original: Callable[..., Awaitable[RecallResult]]
) -> Iterator[None]:
    """`Recall.recall` is `recall` while open, `original` again after: the lab's recorders
    wrap the product's recall without a change to it."""
    Recall.recall = recall  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        Recall.recall = original  # type: ignore[method-assign, assignment]


@contextmanager
def recording_turns(recorder: TurnRecorder) -> Iterator[None]:
    """Records, beside every recall while open, what `Turn` keeps."""
    original = Recall.recall

    async def recall(self: Recall, subject_id: UUID, query: str, **kw: Any) -> RecallResult:
        result = await original(self, subject_id, query, **kw)
        ports, backend = self.ports, self.ports.backend
        assert backend is not None  # noqa: S101
        policy = ports.policies.for_tenant(kw.get("tenant"))
        wide = replace(wide_query(query, policy), threshold=0.0, limit=MAX_LIMIT)
        reader, asked = ports.asked_fields, None
        subject = recorder.subject(subject_id)
        if reader is not None and (vector := await reader.query_vector(query)) is not None:
            wide = replace(wide, vector=vector)
            asked = reader.field_of(subject.kind, vector)
        ns = namespace_for(subject_id)
        hits = await backend.search(ns, wide)
        mask = (await turn_source(ports.sources, ports.forgets, ports.turns).turn(subject_id)).mask
        seen = [Seen(h, await _dropped(h, mask, backend, ns)) for h in hits]
        recorder.turns.append(
            Turn(query, result, tuple(seen), _changes(subject), policy.threshold, asked)
        )
        return result

    with recall_replaced(recall, original):
        yield


def _word(text: str, keyword: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(keyword.lower())}(?!\w)", text.lower()) is not None


def _stale_in(text: str, q: Question) -> bool:
    return any(_word(text, k) for k in q.stale) and not (q.answer and holds_all(text, q.answer))


def _session_index(session_id: str | None) -> int | None:
    if session_id is None or "-s" not in session_id:
        return None
    tail = session_id.rsplit("-s", 1)[1]
    return int(tail) if tail.isdigit() else None


def _line_role(case: Case, hit: SearchHit) -> tuple[str, str] | None:
    n = _session_index(hit_session_id(hit))
    if n is None or not hit.source_indexes or n >= len(case.sessions):
        return None
    lines = case.sessions[n].lines
    i = hit.source_indexes[0]
    return lines[i] if i < len(lines) else None


def _writers_class(case: Case, upto: int, text: str) -> str | None:
    """The writers' not-proposed kind of a memory: an item of a session so far whose keywords
    the memory holds."""
    for session in case.sessions[: upto + 1]:
        for item in session.not_proposed:
            if item.keywords and holds_all(text, item.keywords):
                return item.why
    return None


def _by_what(case: Case, n: int, q: Question, turn: Turn) -> str:
    """What took the first of the top places."""
    first = turn.result.notes[0] if turn.result.notes else None
    if first is None:
        return "nothing"
    if first.origin.kind is NoteKind.PROPOSAL:
        return "a_pending_value"
    if first.origin.kind is NoteKind.PROFILE:
        return "a_confirmed_field"
    if q.stale and any(_word(first.text, k) for k in q.stale):
        return "an_older_statement"
    hit = next((s.hit for s in turn.seen if s.hit.id == first.origin.ref), None)
    role = None if hit is None else _line_role(case, hit)
    if role is not None and role[0] != "subject":
        return "an_agent_line"
    why = _writers_class(case, n, first.text)
    return why if why in ("small_talk", "third_party") else "another_statement"


def miss_class(case: Case, n: int, q: Question, turn: Turn) -> str:
    """The class of a question whose right note is not in the top 3 (module docstring)."""
    holding = [s for s in turn.seen if holds_all(s.hit.text, q.answer)]
    current = [s for s in holding if s.dropped is None]
    if current:
        if max(s.hit.score for s in current) < turn.threshold:
            return "below_threshold"
        return "ranked_below_3:" + _by_what(case, n, q, turn)
    if holding:
        rules = Counter(s.dropped for s in holding)
        return "filtered:" + str(rules.most_common(1)[0][0])
    pending = [
        c for c in turn.changes if c.status is ChangeStatus.PENDING and holds_all(c.value, q.answer)
    ]
    if pending:
        field = pending[-1].field
        asked = "none" if turn.asked is None else ("this" if turn.asked == field else "another")
        return f"only_pending:asked_{asked}"
    said = [(r, t) for s in case.sessions[: n + 1] for r, t in s.lines]
    if any(r == "subject" and holds_all(t, q.answer) for r, t in said):
        return "never_a_memory:in_a_subject_line"
    if any(holds_all(t, q.answer) for _, t in said):
        return "never_a_memory:in_an_agent_line"
    return "never_a_memory:in_no_line"


def stale_class(case: Case, n: int, q: Question, turn: Turn, text: str) -> str:
    """The class of a stale note (module docstring)."""
    keys = [k for k in q.stale if _word(text, k)]
    holding = [c for c in turn.changes if any(_word(c.value, k) for k in keys)]
    if any(c.status is ChangeStatus.REJECTED for c in holding):
        return "rejected_value_offered"
    if any(c.status is ChangeStatus.FORGOTTEN for c in holding):
        return "forgotten_value_offered"
    fields = {c.field for c in holding}
    forgets = [c for c in turn.changes if c.operation is Operation.FORGET]
    if any(c.field in fields for c in forgets):
        return "value_of_a_field_asked_to_forget"
    expected_forgets = [
        f
        for s in case.sessions[: n + 1]
        for f in s.forgets
        if any(_word(" ".join(f.keywords), k) for k in keys)
    ]
    if expected_forgets:
        return "forget_request_not_placed_on_it"
    why = _writers_class(case, n, text)
    if why is not None and not holding:
        return f"writers_{why}"
    later = [
        c
        for c in turn.changes
        if c.field in fields
        and c.operation is Operation.SET
        and c.order > max(h.order for h in holding)
    ]
    if holding and later:
        return "replaced_value_not_recognised:later_proposed_for_field"
    if any(
        e.updates and any(_word(e.updates, k) for k in keys)
        for s in case.sessions[: n + 1]
        for e in s.proposals
    ):
        update_at = min(
            i
            for i, s in enumerate(case.sessions[: n + 1])
            for e in s.proposals
            if e.updates and any(_word(e.updates, k) for k in keys)
        )
        note_session = _note_session(turn, text)
        if note_session is not None and note_session >= update_at:
            return "the_updates_own_note_names_the_old_value"
        return (
            "replaced_value_not_recognised:later_never_proposed_for_field"
            if holding
            else "replaced_value_not_recognised:neither_proposed"
        )
    return "pending_or_confirmed_value" if holding else "memory_only_other"


def _note_session(turn: Turn, text: str) -> int | None:
    hit = next((s.hit for s in turn.seen if s.hit.text == text), None)
    return None if hit is None else _session_index(hit_session_id(hit))


def tally_questions(
    run: CaseRun,
    turns: Sequence[Turn],
    misses: Counter[str],
    stale: Counter[str],
    detail: list[dict[str, Any]] | None = None,
) -> None:
    asked = [(a, run.case.sessions[a.session].questions[a.index]) for a in run.asked]
    for (a, q), turn in zip(asked, turns, strict=True):
        notes = [note.text for note in turn.result.notes[:TOP]]
        row: dict[str, Any] = {}
        if q.answer and not any(holds_all(t, q.answer) for t in notes):
            row["miss"] = miss_class(run.case, a.session, q, turn)
            misses[row["miss"]] += 1
        stale_notes = [t for t in notes if q.stale and _stale_in(t, q)]
        if stale_notes:
            row["stale"] = stale_class(run.case, a.session, q, turn, stale_notes[0])
            stale[row["stale"]] += 1
        if detail is not None:
            below = [s.hit for s in turn.seen if s.dropped is None and s.hit.score < turn.threshold]
            detail.append(
                {
                    "case": run.case.id,
                    "session": a.session,
                    "question": q.text,
                    "answer": q.answer,
                    "stale_keywords": q.stale,
                    "notes": notes,
                    "asked": turn.asked,
                    **row,
                    "below": [
                        (
                            h.text,
                            round(h.score, 3),
                            str(h.occurred_at),
                            hit_session_id(h),
                            h.source_indexes,
                        )
                        for h in below[:6]
                    ],
                    "changes": [
                        (
                            c.field,
                            c.value,
                            c.status.value,
                            c.operation.value,
                            c.session_id,
                            c.message_index,
                        )
                        for c in turn.changes
                    ],
                }
            )
