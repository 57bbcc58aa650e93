"""Requests to forget, placed on their fields, as the model's pending changes.

Pure. A candidate (the field, the subject's words asking) becomes a change with operation
`forget`, stated (the subject asked), quoting the request; a candidate naming some items of the
field's list carries them as its value (ADR 0160). Its id is derived from (subject,
session, model, field) and the operation, so a rerun proposes the same request, never a
second; a field with nothing left to forget, or with a request already open, gets none. A
request that concerns no field names the subject's lines it concerns instead (ADR 0174).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import NAMESPACE_URL, UUID, uuid5

from factledger.domain.proposal import Proposal, item_key
from factledger.domain.provenance import Actor, ChangeStatus, Evidence, Operation, Origin
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.subject import Subject
from factledger.domain.values import ListValue

_REQUEST_IDS = uuid5(NAMESPACE_URL, "factledger:forget-requests")


@dataclass(frozen=True, slots=True)
class ForgetRequestCandidate:
    """A request to forget placed on the field it concerns, the subject's words as evidence."""

    field: str
    evidence: Evidence
    placed_by: str  # "name" or "meaning": how the field was chosen (ADR 0172)
    # Items of the field's list the request names, when it names some and not all (ADR 0160);
    # empty: the whole field.
    items: tuple[str, ...] = ()
    # For a request that concerns no field (`field` is `SAID_LINES`, ADR 0174): the subject's
    # lines it concerns, as (session id, message index).
    lines: tuple[tuple[str, int], ...] = ()


def request_id_for(subject_id: UUID, session_id: str, model: Actor, field: str) -> UUID:
    return uuid5(_REQUEST_IDS, f"{subject_id}/{session_id}/{model.id}/{field}")


def has_open_request(subject: Subject, field: str) -> bool:
    return any(
        c.field == field
        and c.status is ChangeStatus.PENDING
        and c.proposal.operation is Operation.FORGET
        for c in subject.changes.values()
    )


def plan_requests(
    subject: Subject,
    candidates: Sequence[ForgetRequestCandidate],
    model: Actor,
    session_id: str,
) -> list[Proposal]:
    planned = []
    for candidate in candidates:
        change_id = request_id_for(subject.id, session_id, model, candidate.field)
        if change_id in subject.changes:
            continue
        if candidate.field == SAID_LINES:
            planned += _said_request(subject, candidate, model, change_id)
            continue
        if has_open_request(subject, candidate.field):
            continue
        if not subject.holds_words_of(candidate.field):
            continue
        where = (
            f"session {candidate.evidence.session_id}, message {candidate.evidence.message_index}"
        )
        items = _still_held(subject, candidate)
        planned.append(
            Proposal(
                change_id=change_id,
                field=candidate.field,
                operation=Operation.FORGET,
                value=ListValue(items) if items else None,
                origin=Origin.STATED,
                proposed_by=model,
                based_on_version=subject.profile_version,
                evidence=candidate.evidence,
                rationale=(
                    f"request to forget {'items of ' if items else ''}{candidate.field}: said "
                    f"({where}); field chosen by {candidate.placed_by}"
                ),
            )
        )
    return planned


def _said_request(
    subject: Subject, candidate: ForgetRequestCandidate, model: Actor, change_id: UUID
) -> list[Proposal]:
    """A request to forget what was said, naming the lines still readable (a forget since the
    review read them may have taken some: ADR 0174)."""
    lines = [
        line_ref(session_id, index)
        for session_id, index in candidate.lines
        if (session := subject.sessions.get(session_id)) is not None
        and index < len(session.messages)
        and session.messages[index][1]
    ]
    if not lines:
        return []
    where = f"session {candidate.evidence.session_id}, message {candidate.evidence.message_index}"
    return [
        Proposal(
            change_id=change_id,
            field=SAID_LINES,
            operation=Operation.FORGET_SAID,
            value=ListValue(tuple(lines)),
            origin=Origin.STATED,
            proposed_by=model,
            based_on_version=subject.profile_version,
            evidence=candidate.evidence,
            rationale=f"request to forget what was said ({where}); lines chosen by meaning",
        )
    ]


def _still_held(subject: Subject, candidate: ForgetRequestCandidate) -> tuple[str, ...]:
    """The candidate's items the field's list holds now (the review read an earlier state);
    none when it holds none of them, or all of its items would go."""
    keys = {item_key(i) for i in subject.held_items(candidate.field)}
    items = tuple(i for i in candidate.items if item_key(i) in keys)
    return items if len(items) < len(keys) else ()
