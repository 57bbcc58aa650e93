"""Each API operation as a `Call`: method, path, body, query, answer model, and whether it is a
command (which gets an idempotency key, reused on every retry). Both clients send these."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote
from uuid import UUID

from pydantic import BaseModel

from factledger.client import models as m

AnswerT = TypeVar("AnswerT", bound=BaseModel)
ME = "me"


@dataclass(frozen=True, slots=True)
class Call(Generic[AnswerT]):
    method: str
    path: str
    answer: type[AnswerT]
    body: Mapping[str, Any] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None  # set for commands; the same key on every retry


def _command(
    path: str, answer: type[AnswerT], body: Mapping[str, Any], key: str | None
) -> Call[AnswerT]:
    return Call("POST", path, answer, body, idempotency_key=key or uuid.uuid4().hex)


def _s(subject: str | UUID) -> str:
    return "/v1/subjects/" + quote(str(subject), safe="")


def whoami() -> Call[m.WhoAmI]:
    return Call("GET", "/v1/whoami", m.WhoAmI)


def register_subject(kind: str, external_ref: str, key: str | None) -> Call[m.Subject]:
    return _command("/v1/subjects", m.Subject, {"kind": kind, "external_ref": external_ref}, key)


def lookup_subject(kind: str, external_ref: str) -> Call[m.Subject]:
    params = {"kind": kind, "external_ref": external_ref}
    return Call("GET", "/v1/subjects/lookup", m.Subject, params=params)


def get_subject(subject: str | UUID) -> Call[m.Subject]:
    return Call("GET", _s(subject), m.Subject)


def start_session(
    subject: str | UUID,
    session_id: str,
    channel: m.Channel,
    started_at: datetime | None = None,
    conversation_type: str | None = None,
) -> Call[m.Session]:
    body: dict[str, Any] = {"session_id": session_id, "channel": channel}
    if started_at is not None:  # a conversation relayed later keeps its own time
        body["started_at"] = started_at.isoformat()
    if conversation_type is not None:  # picks the guidance the product reads it with
        body["conversation_type"] = conversation_type
    # The caller's session id makes a retried start a no-op: no key needed.
    return Call("POST", f"{_s(subject)}/sessions", m.Session, body)


def append_message(
    subject: str | UUID,
    session_id: str,
    message: Mapping[str, Any],
    key: str | None,
) -> Call[m.MessageOutcome]:
    path = f"{_s(subject)}/sessions/{quote(session_id, safe='')}/messages"
    return _command(path, m.MessageOutcome, message, key)


def session_messages(subject: str | UUID, session_id: str, last: int | None) -> Call[m.Transcript]:
    params = {} if last is None else {"last": last}
    path = f"{_s(subject)}/sessions/{quote(session_id, safe='')}/messages"
    return Call("GET", path, m.Transcript, params=params)


def end_session(
    subject: str | UUID,
    session_id: str,
    summary: Mapping[str, Any] | None,
    proposals: Sequence[m.ProposalDraft],
    key: str | None,
) -> Call[m.EndedSession]:
    body = {
        "summary": None if summary is None else dict(summary),
        "proposals": [p.model_dump(mode="json", exclude_none=True) for p in proposals],
    }
    path = f"{_s(subject)}/sessions/{quote(session_id, safe='')}/end"
    return _command(path, m.EndedSession, body, key)


def context(subject: str | UUID, topic: str | None) -> Call[m.SessionContext]:
    return Call("POST", f"{_s(subject)}/context", m.SessionContext, {"topic": topic})


def recall(subject: str | UUID, query: str) -> Call[m.RecallAnswer]:
    return Call("POST", f"{_s(subject)}/recall", m.RecallAnswer, {"query": query})


def propose(subject: str | UUID, draft: m.ProposalDraft, key: str | None) -> Call[m.Proposal]:
    body = draft.model_dump(mode="json", exclude_none=True)
    return _command(f"{_s(subject)}/proposals", m.Proposal, body, key)


def decide(
    subject: str | UUID, change_id: UUID, action: str, body: Mapping[str, Any], key: str | None
) -> Call[m.Decision]:
    return _command(f"{_s(subject)}/proposals/{change_id}/{action}", m.Decision, body, key)


def forget(subject: str | UUID, body: Mapping[str, Any], key: str | None) -> Call[m.Forgotten]:
    return _command(f"{_s(subject)}/forget", m.Forgotten, body, key)


def forget_field(
    subject: str | UUID, field: str, reason: str, items: Sequence[str] | None, key: str | None
) -> Call[m.Forgotten]:
    """The field forgotten; with `items`, only those items of its list (the rest stay)."""
    body: dict[str, Any] = {"field": field, "reason": reason}
    if items is not None:
        body["items"] = list(items)
    return forget(subject, body, key)


def profile(
    subject: str | UUID, as_of: datetime | None, clock: m.Clock | None = None
) -> Call[m.Profile]:
    params = {} if as_of is None else {"as_of": as_of.isoformat()}
    if clock is not None:
        params["clock"] = clock
    return Call("GET", f"{_s(subject)}/profile", m.Profile, params=params)


def profile_version(subject: str | UUID, version: int) -> Call[m.Profile]:
    return Call("GET", f"{_s(subject)}/profile/versions/{version}", m.Profile)


def history(subject: str | UUID, field: str | None) -> Call[m.History]:
    params = {} if field is None else {"field": field}
    return Call("GET", f"{_s(subject)}/profile/history", m.History, params=params)


def diff(subject: str | UUID, from_version: int, to_version: int) -> Call[m.Diff]:
    params = {"from_version": from_version, "to_version": to_version}
    return Call("GET", f"{_s(subject)}/profile/diff", m.Diff, params=params)


def diff_at(
    subject: str | UUID, from_as_of: datetime, to_as_of: datetime, clock: m.Clock | None
) -> Call[m.Diff]:
    params = {"from_as_of": from_as_of.isoformat(), "to_as_of": to_as_of.isoformat()}
    if clock is not None:
        params["clock"] = clock
    return Call("GET", f"{_s(subject)}/profile/diff", m.Diff, params=params)


QUEUE_FILTERS = (
    "kind",
    "field",
    "origin",
    "proposer",
    "conversation_type",
    "q",
    "older_than",
    "newer_than",
    "group",
    "subject_id",
)


def _filters(filters: Mapping[str, Any]) -> dict[str, str]:
    unknown = set(filters) - set(QUEUE_FILTERS)
    if unknown:
        raise ValueError(f"unknown queue filter(s): {', '.join(sorted(unknown))}")
    return {k: str(v) for k, v in filters.items() if v is not None}


def pending(limit: int, cursor: str | None, filters: Mapping[str, Any]) -> Call[m.PendingList]:
    params: dict[str, Any] = {"limit": limit, **_filters(filters)}
    if cursor is not None:
        params["cursor"] = cursor
    return Call("GET", "/v1/proposals/pending", m.PendingList, params=params)


def pending_groups(limit: int, offset: int, filters: Mapping[str, Any]) -> Call[m.PendingGroups]:
    params = {"limit": limit, "offset": offset, **_filters(filters)}
    return Call("GET", "/v1/proposals/pending/groups", m.PendingGroups, params=params)


def decision_body(
    decision: str,
    changes: list[tuple[UUID, UUID]] | None,
    filters: dict[str, str] | None,
    snapshot: str | None,
    expected_count: int | None,
    note: str | None,
    reason: str | None,
) -> dict[str, Any]:
    """The body of one decision on many pending changes: ticked changes, or a filter's."""
    body: dict[str, Any] = {"decision": decision}
    if changes is not None:
        body["changes"] = [{"subject_id": str(s), "change_id": str(ch)} for s, ch in changes]
    if filters is not None:
        body.update(filter=filters, snapshot=snapshot, expected_count=expected_count)
    if note is not None:
        body["note"] = note
    if reason is not None:
        body["reason"] = reason
    return body


def decide_pending(body: Mapping[str, Any], key: str | None) -> Call[m.Decisions]:
    return _command("/v1/proposals/pending/decisions", m.Decisions, body, key)


def events(subject: str | UUID, after: int, limit: int) -> Call[m.EventPage]:
    params = {"after": after, "limit": limit}
    return Call("GET", f"{_s(subject)}/events", m.EventPage, params=params)


def dead_letters(limit: int, after: str | None) -> Call[m.DeadLetters]:
    params: dict[str, Any] = {"limit": limit} if after is None else {"limit": limit, "after": after}
    return Call("GET", "/v1/dead-letters", m.DeadLetters, params=params)


def retry_dead_letters(item_id: str | None) -> Call[m.Retried]:
    path = "/v1/dead-letters/retry" if item_id is None else f"/v1/dead-letters/{item_id}/retry"
    return Call("POST", path, m.Retried, {})


def message_body(
    role: m.Role,
    text: str,
    at: datetime | None,
    flagged: bool,
    *,
    confirms: UUID | None = None,
    declines: UUID | None = None,
    asks: UUID | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "text": text, "flagged": flagged}
    if at is not None:
        body["at"] = at.isoformat()
    if confirms is not None:
        body["confirms"] = str(confirms)
    if declines is not None:
        body["declines"] = str(declines)
    if asks is not None:
        body["asks"] = str(asks)
    return body
