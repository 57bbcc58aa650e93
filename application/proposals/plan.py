"""What the model proposes from one session, weighed against the subject as it stands.

Pure (the subject is loaded by the caller). For each candidate:

- a single-valued field: nothing when the profile holds the value already, an open change
  proposes it already, or a reviewer rejected it before; otherwise `set` (an update when the
  profile, an open change or an earlier proposal holds another value), superseding every open
  `set` of the field; recall then no longer offers the earlier statement's memory as current
  (`recall.replaced`);
- a list field: the values neither held, open nor rejected, as one `append` (an extension);
  the items the session says no longer hold (`dropped`), when held, as one `remove` (ADR
  0159);
- "the same value" is by meaning, not by characters (`memory.sameness`: case, accents,
  punctuation and number formats aside), so "12,000" repeats "12000" and proposes nothing;
  nor does a shorter wording of a value said before ("Obinna" after "Obinna Eze", ADR 0230);
- a value that only names its field ("Same address", "Emergency contact") is no value, and
  is never proposed (ADR 0234);
- an update's or a correction's rationale names the value it replaces: the one the session
  said no longer holds, else the profile's, else the latest said open change's, else the
  latest earlier proposal's that a newer one superseded;
- the change id is derived from (subject, session, model, field): a rerun proposes the same
  change, never a second one;
- statements are weighed by when they were said, not by when their sessions were recorded (a
  session an import skipped may be recorded after later ones): a single value said before
  the profile's value or an open change of the field was said is older news, and proposes
  nothing (it would overwrite the newer statement once approved); only open changes said
  earlier are superseded;
- a caller's pending change from the same session, of the same field and value by meaning,
  is what the model would propose: one statement gets one proposal, so the caller's change is
  kept (nothing proposed, nothing superseded) and the review notes that it agrees with it
  (`agreed_changes`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import NAMESPACE_URL, UUID, uuid5

from factledger.application.memory.sameness import same_value, shortens
from factledger.application.proposals.candidates import Candidate
from factledger.application.proposals.field_names import restates_field
from factledger.domain.proposal import ChangeRecord, CurrentField, Proposal
from factledger.domain.provenance import (
    REQUESTS_TO_FORGET,
    Actor,
    ActorKind,
    ChangeStatus,
    Operation,
    Origin,
)
from factledger.domain.subject import Subject
from factledger.domain.values import FieldValue, ListValue, TextValue, render

_CHANGE_IDS = uuid5(NAMESPACE_URL, "factledger:model-proposals")


def change_id_for(
    subject_id: UUID, session_id: str, model: Actor, field: str, *, removal: bool = False
) -> UUID:
    """The change's id; a removal has its own, beside the session's extension of the field."""
    tail = "/remove" if removal else ""
    return uuid5(_CHANGE_IDS, f"{subject_id}/{session_id}/{model.id}/{field}{tail}")


@dataclass(frozen=True, slots=True)
class PlannedChange:
    proposal: Proposal
    supersedes: tuple[UUID, ...] = ()


def _changes_of(subject: Subject, field: str, status: ChangeStatus) -> list[ChangeRecord]:
    return [c for c in subject.changes.values() if c.field == field and c.status is status]


def _items(value: FieldValue | None) -> tuple[str, ...]:
    if isinstance(value, ListValue):
        return value.items
    return () if value is None else (render(value),)


def where_said(session_id: str, message_index: int) -> str:
    """A rationale's pointer to the message a value was said in, for a reviewer."""
    return f" (session {session_id}, message {message_index})"


# The pointer as `where_said` writes it: ids, which a record's search text leaves out.
WHERE_SAID = re.compile(r" \(session [^()]*, message \d+\)")


def _rationale(candidate: Candidate, relation: str, replaced: str | None = None) -> str:
    said = candidate.said_in
    where = "" if said is None else where_said(*said)
    how = "concluded from what was said" if candidate.origin is Origin.INFERRED else "said"
    if said is not None and candidate.read_back is not None:
        how = f"said by the agent{where_said(said[0], candidate.read_back)}, confirmed"
    instead = "" if replaced is None else f"; replaces {replaced}"
    return f"{relation} of {candidate.feed.field}: {how}{where}{instead}"


def _known(value: str, values: set[str]) -> bool:
    return any(same_value(value, v) for v in values)


def _said_at(subject: Subject, where: tuple[str, int] | None, fallback: datetime) -> datetime:
    """When the message at `where` (session id, message index) was said."""
    session = None if where is None else subject.sessions.get(where[0])
    return fallback if session is None or where is None else session.said_at(where[1])


def evidence_said(subject: Subject, record: ChangeRecord) -> datetime:
    """When a change's evidence was said (when it was proposed, for one without)."""
    evidence = record.proposal.evidence
    where = None if evidence is None else (evidence.session_id, evidence.message_index)
    return _said_at(subject, where, record.proposed_at)


def _current_said(subject: Subject, current: CurrentField) -> datetime:
    """When the profile's value was said: the subject's confirming words, else the evidence
    of the change that set it, else the decision."""
    record = subject.changes.get(current.change_id)
    if current.confirmed_by.kind is ActorKind.SUBJECT or record is None:
        return current.confirmed_at
    return evidence_said(subject, record) if record.proposal.evidence else current.confirmed_at


def _candidate_said(subject: Subject, candidate: Candidate, session_id: str) -> datetime:
    session = subject.sessions.get(session_id)
    start = datetime.max.replace(tzinfo=UTC) if session is None else session.started_at
    return _said_at(subject, candidate.said_in, start)


def _previous_value(
    subject: Subject, field: str, held: set[str], open_sets: Sequence[ChangeRecord]
) -> str | None:
    """The value an update replaces: the profile's, else the latest said of the field's open
    changes, else of its earlier proposals a newer one superseded (an update of a value never
    reviewed is still an update)."""
    if held:
        return next(iter(held))
    earlier = open_sets or _changes_of(subject, field, ChangeStatus.SUPERSEDED)
    said = [c for c in earlier if c.operation is Operation.SET and c.proposal.value is not None]
    if not said:
        return None
    latest = max(said, key=lambda c: (evidence_said(subject, c), c.proposed_version))
    return render(latest.proposal.value) if latest.proposal.value is not None else None


def _plan_removal(
    subject: Subject, candidate: Candidate, model: Actor, session_id: str
) -> PlannedChange | None:
    """The items the session drops that the subject holds (confirmed, or in an open
    extension said before the removal) and no open removal takes off already, as one
    `remove`."""
    field = candidate.feed.field
    current = subject.fields.get(field)
    said = _candidate_said(subject, candidate, session_id)
    held = list(_items(None if current is None else current.value))
    removing: set[str] = set()
    for record in _changes_of(subject, field, ChangeStatus.PENDING):
        if record.operation is Operation.APPEND and evidence_said(subject, record) <= said:
            held += _items(record.proposal.value)
        elif record.operation is Operation.REMOVE:
            removing |= set(_items(record.proposal.value))
    items = [
        next(h for h in held if same_value(h, v))
        for v in candidate.values
        if _known(v, set(held)) and not _known(v, removing)
    ]
    if not items:
        return None
    proposal = Proposal(
        change_id=change_id_for(subject.id, session_id, model, field, removal=True),
        field=field,
        operation=Operation.REMOVE,
        value=ListValue(tuple(dict.fromkeys(items))),
        origin=Origin.STATED,
        proposed_by=model,
        based_on_version=subject.profile_version,
        evidence=candidate.evidence,
        rationale=_rationale(candidate, "removal"),
    )
    return PlannedChange(proposal)


def _plan_one(
    subject: Subject, candidate: Candidate, model: Actor, session_id: str
) -> PlannedChange | None:
    if candidate.removes:
        return _plan_removal(subject, candidate, model, session_id)
    field = candidate.feed.field
    current = subject.fields.get(field)
    held = set(_items(None if current is None else current.value))
    open_ = _changes_of(subject, field, ChangeStatus.PENDING)
    rejected = {
        i
        for c in _changes_of(subject, field, ChangeStatus.REJECTED)
        for i in _items(c.proposal.value)
    }
    # Open changes' items, a pending request to forget's among them: an item the subject asked
    # to have forgotten is not proposed again while the request waits (ADR 0160).
    offered = {i for c in open_ for i in _items(c.proposal.value)}
    fresh: list[str] = []
    for v in candidate.values:
        if restates_field(v, field):
            continue
        known = held | offered | rejected | set(fresh)
        if not _known(v, known) and not any(shortens(v, k) for k in known):
            fresh.append(v)
    if not fresh:
        return None
    value: FieldValue
    supersedes: tuple[UUID, ...] = ()
    replaced: str | None = None
    if candidate.feed.many:
        operation, value, relation = Operation.APPEND, ListValue(tuple(fresh)), "extension"
    else:
        said = _candidate_said(subject, candidate, session_id)
        open_sets = [c for c in open_ if c.operation is Operation.SET]
        newer = current is not None and _current_said(subject, current) > said
        if newer or any(evidence_said(subject, c) > said for c in open_sets):
            return None  # older news: the newer statement stands
        operation = Operation.SET
        value = candidate.typed if candidate.typed is not None else TextValue(fresh[-1])
        previous = _previous_value(subject, field, held, open_sets)
        relation = "update" if previous is not None else "new value"
        if candidate.replaces is not None:
            relation, replaced = "correction", candidate.replaces
        else:
            replaced = previous
        supersedes = tuple(c.change_id for c in open_sets)
    if candidate.origin is Origin.INFERRED:
        relation = "derivation"
    proposal = Proposal(
        change_id=change_id_for(subject.id, session_id, model, field),
        field=field,
        operation=operation,
        value=value,
        origin=candidate.origin,
        proposed_by=model,
        based_on_version=subject.profile_version,
        evidence=candidate.evidence,
        condition=candidate.condition,
        rationale=_rationale(candidate, relation, replaced),
    )
    return PlannedChange(proposal, supersedes)


def plan_changes(
    subject: Subject, candidates: Sequence[Candidate], model: Actor, session_id: str
) -> list[PlannedChange]:
    """The changes to propose, skipping any whose change id the subject already holds."""
    planned = (_plan_one(subject, c, model, session_id) for c in candidates)
    return [p for p in planned if p is not None and p.proposal.change_id not in subject.changes]


def agreed_changes(
    subject: Subject, candidates: Sequence[Candidate], model: Actor, session_id: str
) -> list[UUID]:
    """The callers' pending changes drawn from this session that a candidate repeats: same
    field, and a value the same by meaning (for a list, an item in common)."""
    agreed: list[UUID] = []
    for candidate in candidates:
        for record in _changes_of(subject, candidate.feed.field, ChangeStatus.PENDING):
            proposal = record.proposal
            if proposal.proposed_by == model or proposal.evidence is None:
                continue
            if proposal.operation in REQUESTS_TO_FORGET:
                continue  # a request's items are what would go, never a statement (ADR 0160)
            if candidate.removes != (proposal.operation is Operation.REMOVE):
                continue  # a removal agrees with a removal only, a statement with a statement
            if proposal.evidence.session_id != session_id:
                continue
            said = _items(proposal.value)
            if any(_known(v, set(said)) for v in candidate.values):
                agreed.append(record.change_id)
    return agreed
