"""Proposed changes and decisions on them: who may confirm what, on what evidence."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from uuid import UUID

from factledger.domain.errors import (
    ChangeNotPendingError,
    ConfirmationBeforeProposalError,
    ConfirmationNotAllowedError,
    ConfirmationNotFromSubjectError,
    ConfirmationReusesEvidenceError,
    ConfirmationWithoutEvidenceError,
    EvidenceNotFoundError,
    HedgeDroppedError,
    InvalidOperationError,
    InvalidValueError,
    StatedWithoutEvidenceError,
)
from factledger.domain.hedges import TentativeReader, hedge_dropped, sentences_around
from factledger.domain.provenance import (
    DECIDERS,
    MAX_QUOTE,
    RELAYS_NEVER,
    REQUESTS_TO_FORGET,
    Actor,
    ActorKind,
    ChangeStatus,
    Evidence,
    Operation,
    Origin,
)
from factledger.domain.said_lines import SAID_LINES, parse_line_refs
from factledger.domain.sessions import SessionInfo
from factledger.domain.text import check_text
from factledger.domain.transcript import Role
from factledger.domain.values import (
    FieldValue,
    Immutable,
    JsonObject,
    ListValue,
    TextValue,
    to_payload,
)

MAX_CONDITION = 500
MAX_RATIONALE = 2000
MAX_NOTE = 500  # a reviewer's note on an approval


@dataclass(frozen=True, slots=True)
class Proposal(Immutable):
    """A change to one profile field, as a model, agent or staff member proposes it."""

    change_id: UUID
    field: str
    operation: Operation
    value: FieldValue | None
    origin: Origin
    proposed_by: Actor
    based_on_version: int
    evidence: Evidence | None = None
    condition: str | None = None  # kept verbatim: "if the pricing works"
    # Always text when proposed; None once the field's key is deleted, like the
    # value, condition and evidence encrypted with it.
    rationale: str | None = ""
    command_id: str | None = None

    def __post_init__(self) -> None:
        if self.condition is not None and not 0 < len(self.condition.strip()) <= MAX_CONDITION:
            raise InvalidValueError(f"condition: must be 1..{MAX_CONDITION} characters")
        if self.based_on_version < 0:
            raise InvalidValueError("based_on_version: must be >= 0")

    def check_new(self) -> None:
        """Limits checked when the change is proposed; replays trust recorded proposals."""
        if len(self.rationale or "") > MAX_RATIONALE:
            raise InvalidValueError(f"rationale: at most {MAX_RATIONALE} characters")
        check_text(self.rationale, "rationale")
        check_text(self.condition, "condition")
        check_value_text(self.value)
        check_evidence_text(self.evidence)

    @property
    def redacted(self) -> bool:
        """True when the proposal was read after its field's key was deleted: its value,
        condition, evidence and rationale are gone for good."""
        return self.rationale is None

    def to_event_fields(self) -> dict[str, object]:
        return {
            "change_id": self.change_id,
            "field": self.field,
            "operation": self.operation.value,
            "value": None if self.value is None else to_payload(self.value),
            "condition": self.condition,
            "origin": self.origin.value,
            "evidence": None if self.evidence is None else self.evidence.to_payload(),
            "rationale": self.rationale,
            "proposed_by": self.proposed_by.to_payload(),
            "based_on_version": self.based_on_version,
            "command_id": self.command_id,
        }

    def fingerprint(self) -> str:
        fields = self.to_event_fields()
        del fields["command_id"]
        fields["change_id"] = str(self.change_id)
        canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Decision:
    """Who confirms, rejects or asks to forget, with the evidence a subject's decision needs."""

    by: Actor
    evidence: Evidence | None = None
    command_id: str | None = None
    note: str | None = None  # a reviewer's note on an approval
    # The principal that relayed the subject's words (the channel's service, a channel
    # principal): recorded beside them. None for a reviewer's own decision.
    relayed_by: Actor | None = None


@dataclass(frozen=True, slots=True)
class ChangeRecord:
    """A proposal as the subject keeps it, with its status. Immutable: a decision replaces
    the record, so a copy of the subject shares its records instead of copying each."""

    proposal: Proposal
    proposed_at: datetime
    status: ChangeStatus = ChangeStatus.PENDING
    note: str | None = None  # the approval's note, once confirmed (None once its key is gone)
    proposed_version: int = 0  # the subject's version once proposed (see `check_confirmation`)
    # The profile version the confirmation created: what its decision answers, however many
    # versions came after it.
    confirmed_version: int | None = None
    # Who decided it (the subject, or staff), and who relayed the subject's words that did
    # (None: undecided, a reviewer's decision, or a decision recorded before relays were).
    decided_by: Actor | None = None
    relayed_by: Actor | None = None

    def with_status(self, status: ChangeStatus) -> ChangeRecord:
        return replace(self, status=status)

    @property
    def fingerprint(self) -> str:
        # Computed on demand: only a re-proposal of the same change id needs it, and replays
        # would otherwise hash every proposal again.
        return self.proposal.fingerprint()

    @property
    def change_id(self) -> UUID:
        return self.proposal.change_id

    @property
    def field(self) -> str:
        return self.proposal.field

    @property
    def operation(self) -> Operation:
        return self.proposal.operation

    @property
    def based_on_version(self) -> int:
        return self.proposal.based_on_version


@dataclass(frozen=True, slots=True)
class CurrentField(Immutable):
    """One field of the current profile, with its provenance."""

    value: FieldValue
    condition: str | None
    origin: Origin
    change_id: UUID
    since_version: int
    proposed_by: Actor
    confirmed_by: Actor
    confirmed_at: datetime
    evidence_session: str | None
    # From this time on recall and context stop serving the field (`FieldExpirySet`); a later
    # confirmed change builds a new `CurrentField`, so it clears the expiry.
    valid_until: datetime | None = None
    relayed_by: Actor | None = None  # who relayed the subject's confirming words


def standing_of(field: CurrentField) -> JsonObject:
    """What a field's value stands on besides its words (ids, actors, times: all in clear),
    for a forget that keeps some of a list's items (`FactForgotten.kept_standing`): replayed
    after the forget, the changes that set the value read back without their words."""
    return {
        "origin": field.origin.value,
        "change_id": str(field.change_id),
        "proposed_by": field.proposed_by.to_payload(),
        "confirmed_by": field.confirmed_by.to_payload(),
        "confirmed_at": field.confirmed_at.isoformat(),
        "evidence_session": field.evidence_session,
        "valid_until": None if field.valid_until is None else field.valid_until.isoformat(),
        "relayed_by": None if field.relayed_by is None else field.relayed_by.to_payload(),
    }


def kept_field(items: Sequence[str], standing: JsonObject, since_version: int) -> CurrentField:
    """The field a forget of some of its items leaves: the kept items, standing as before."""

    def actor(name: str) -> Actor | None:
        payload = standing.get(name)
        return Actor.from_payload(payload) if isinstance(payload, dict) else None

    def time(name: str) -> datetime | None:
        at = standing.get(name)
        return datetime.fromisoformat(at) if isinstance(at, str) else None

    proposed_by, confirmed_by, confirmed_at = (
        actor("proposed_by"),
        actor("confirmed_by"),
        time("confirmed_at"),
    )
    if proposed_by is None or confirmed_by is None or confirmed_at is None:
        raise InvalidValueError("kept_standing: needs proposed_by, confirmed_by, confirmed_at")
    session = standing.get("evidence_session")
    return CurrentField(
        value=ListValue(tuple(items)),
        condition=None,  # its words went with the field's
        origin=Origin(str(standing["origin"])),
        change_id=UUID(str(standing["change_id"])),
        since_version=since_version,
        proposed_by=proposed_by,
        confirmed_by=confirmed_by,
        confirmed_at=confirmed_at,
        evidence_session=session if isinstance(session, str) else None,
        valid_until=time("valid_until"),
        relayed_by=actor("relayed_by"),
    )


def kept_items(held: FieldValue | None, forgotten: ListValue) -> tuple[str, ...]:
    """The items of the list `held` that a forget of `forgotten` leaves (none when the field
    holds no list)."""
    if not isinstance(held, ListValue):
        return ()
    gone = {item_key(i) for i in forgotten.items}
    return tuple(i for i in held.items if item_key(i) not in gone)


def apply_operation(
    current: FieldValue | None, operation: Operation, value: FieldValue | None
) -> FieldValue | None:
    """The field's value after a confirmed change (None: the field is absent). A forget
    request is never confirmed as a change: approving it forgets the field."""
    if operation is Operation.UNSET or operation in REQUESTS_TO_FORGET:
        return None
    if operation is Operation.APPEND and isinstance(value, ListValue):
        before = current.items if isinstance(current, ListValue) else ()
        return ListValue(before + tuple(i for i in value.items if i not in before))
    if operation is Operation.REMOVE and isinstance(value, ListValue):
        kept = kept_items(current, value)
        return ListValue(kept) if kept else None
    return value


def item_key(item: str) -> str:
    """What tells two items of a list apart: not their case or spacing ("Aspirin" is the
    "aspirin" held)."""
    return " ".join(item.casefold().split())


def _quoted(evidence: Evidence, sessions: dict[str, SessionInfo]) -> tuple[Role, str]:
    """The recorded message the evidence points at, which must hold the exact quote."""
    if len(evidence.quote) > MAX_QUOTE:
        raise InvalidValueError(f"evidence.quote: at most {MAX_QUOTE} characters")
    session = sessions.get(evidence.session_id)
    if session is None:
        # Messages are recorded when their session ends; an open session's are not yet.
        raise EvidenceNotFoundError(
            f"session {evidence.session_id} is not recorded: evidence must cite a message of "
            "an ended session; end the session first, or send the proposal with its end"
        )
    if evidence.message_index >= len(session.messages):
        raise EvidenceNotFoundError(
            f"session {evidence.session_id} has no message {evidence.message_index} "
            f"(it recorded {len(session.messages)}, numbered from 0)"
        )
    role, text = session.messages[evidence.message_index]
    if evidence.quote not in text:
        raise EvidenceNotFoundError(
            f"session {evidence.session_id} message {evidence.message_index}: quote not found"
        )
    return role, text


def check_evidence(
    evidence: Evidence | None,
    origin: Origin,
    sessions: dict[str, SessionInfo],
    *,
    condition: str | None = None,
    states_value: bool = True,
    tentative: TentativeReader | None = None,
) -> None:
    """Evidence must point at a recorded message holding the exact quote; `stated` needs the
    subject's own words, and, when it states a value and a `tentative` reader is given, keeps
    a tentative quoted sentence's hedge in `condition` (see `domain.hedges`; a request to
    forget states none: "could you maybe forget my budget" asks as firmly as any other
    wording)."""
    if evidence is None:
        if origin is Origin.STATED:
            raise StatedWithoutEvidenceError("a stated change needs evidence")
        return
    role, text = _quoted(evidence, sessions)
    if origin is not Origin.STATED:
        return
    if role is not Role.SUBJECT:
        raise StatedWithoutEvidenceError("a stated change must quote the subject's own message")
    if not states_value or tentative is None:
        return
    if hedge_dropped(sentences_around(text, evidence.quote), condition, tentative):
        raise HedgeDroppedError()


def check_value_text(value: FieldValue | None) -> None:
    match value:
        case TextValue(text):
            check_text(text, "value.value")
        case ListValue(items):
            for index, item in enumerate(items):
                check_text(item, f"value.items[{index}]")


def check_evidence_text(evidence: Evidence | None) -> None:
    if evidence is not None:
        check_text(evidence.session_id, "evidence.session_id")
        check_text(evidence.quote, "evidence.quote")


def check_rejection(record: ChangeRecord, decision: Decision) -> None:
    if record.status is not ChangeStatus.PENDING:
        raise ChangeNotPendingError(f"change {record.change_id} is {record.status.value}")
    if decision.by.kind not in DECIDERS:
        raise ConfirmationNotAllowedError(f"a {decision.by.kind.value} cannot decide on changes")
    check_relay(decision)


def check_relay(decision: Decision) -> None:
    """Only the subject's words are relayed, and never by an agent: the agent talking to the
    subject would be putting its own words in their mouth."""
    relay = decision.relayed_by
    if relay is None:
        return
    if decision.by.kind is not ActorKind.SUBJECT:
        raise ConfirmationNotAllowedError("relayed_by: only the subject's words are relayed")
    if relay.kind in RELAYS_NEVER:
        raise ConfirmationNotAllowedError(
            f"relayed_by: a {relay.kind.value} may not relay the subject's words"
        )


def check_confirmation(
    record: ChangeRecord, decision: Decision, sessions: dict[str, SessionInfo]
) -> None:
    """Staff approve on their own authority; the subject confirms with words that mean it:
    their own message, recorded after the change was proposed, other than its evidence."""
    check_rejection(record, decision)
    if decision.note is not None and len(decision.note) > MAX_NOTE:
        raise InvalidValueError(f"note: at most {MAX_NOTE} characters")
    check_text(decision.note, "note")
    check_evidence_text(decision.evidence)
    if decision.by.kind is ActorKind.SUBJECT:
        check_subject_words(record, decision.evidence, sessions)


def check_subject_words(
    record: ChangeRecord, evidence: Evidence | None, sessions: dict[str, SessionInfo]
) -> None:
    """The rules of a subject's decision on a change, each with its named error."""
    if evidence is None:
        raise ConfirmationWithoutEvidenceError(f"change {record.change_id}")
    role, _ = _quoted(evidence, sessions)
    if role is not Role.SUBJECT:
        raise ConfirmationNotFromSubjectError(
            f"change {record.change_id}: the confirmation must quote the subject's own message"
        )
    own = record.proposal.evidence
    if own is not None and (own.session_id, own.message_index) == (
        evidence.session_id,
        evidence.message_index,
    ):
        raise ConfirmationReusesEvidenceError(
            f"change {record.change_id}: the confirmation cites the proposal's own evidence"
        )
    if sessions[evidence.session_id].recorded_version <= record.proposed_version:
        raise ConfirmationBeforeProposalError(
            f"change {record.change_id}: session {evidence.session_id} was recorded before "
            "the change was proposed"
        )


def check_operation(proposal: Proposal, current: CurrentField | None) -> None:
    """The operation and the value fit each other and the field's current value."""
    op = proposal.operation
    if op is Operation.SET and proposal.value is None:
        raise InvalidOperationError("set: needs a value")
    if op is Operation.UNSET and proposal.value is not None:
        raise InvalidOperationError("unset: takes no value")
    if op is Operation.FORGET:
        _check_forget(proposal, current)
    if (op is Operation.FORGET_SAID) != (proposal.field == SAID_LINES):
        raise InvalidOperationError(
            f"field: {SAID_LINES} is reserved for requests to forget what was said "
            f"(operation {Operation.FORGET_SAID.value}), and such a request names no other field"
        )
    if op in (Operation.APPEND, Operation.REMOVE):
        if not isinstance(proposal.value, ListValue):
            raise InvalidOperationError(f"{op.value}: needs a list value")
        if current is not None and not isinstance(current.value, ListValue):
            raise InvalidOperationError(f"{op.value}: the field does not hold a list")


def said_order(session: SessionInfo, message_index: int) -> tuple[datetime, int, int]:
    """Where a line stands in what the subject said: its session's start (sessions started
    together in the order they were recorded), then its place in the session."""
    return session.started_at, session.recorded_version, message_index


def check_said_lines(proposal: Proposal, sessions: Mapping[str, SessionInfo]) -> None:
    """A request to forget what was said (ADR 0174) names, as its value, recorded lines the
    subject said before the request it quotes, and takes no condition."""
    if proposal.condition is not None:
        raise InvalidOperationError("forget_said: takes no condition")
    value, evidence = proposal.value, proposal.evidence
    if not isinstance(value, ListValue) or not value.items:
        raise InvalidOperationError("forget_said: value: the lines to forget")
    if evidence is None or evidence.session_id not in sessions:
        raise StatedWithoutEvidenceError("forget_said: needs the request as evidence")
    asked_at = said_order(sessions[evidence.session_id], evidence.message_index)
    for session_id, index in parse_line_refs(value.items):
        said = sessions.get(session_id)
        if said is None or not 0 <= index < len(said.messages):
            raise EvidenceNotFoundError(f"forget_said: value: line {index} of {session_id}")
        if said.messages[index][0] is not Role.SUBJECT:
            raise InvalidOperationError(
                f"forget_said: value: line {index} of {session_id} is not the subject's"
            )
        if said_order(said, index) >= asked_at:
            raise InvalidOperationError(
                f"forget_said: value: line {index} of {session_id} was not said before the request"
            )


def _check_forget(proposal: Proposal, current: CurrentField | None) -> None:
    """A request to forget takes the whole field (no value), or some items of a list field
    (ADR 0160; which items the subject holds is the aggregate's check, `check_items_held`)."""
    if proposal.condition is not None:
        raise InvalidOperationError("forget: takes no condition")
    if proposal.value is None:
        return
    if not isinstance(proposal.value, ListValue) or not proposal.value.items:
        raise InvalidOperationError("forget: value: the items of the list to forget, or none")
    if current is not None and not isinstance(current.value, ListValue):
        raise InvalidOperationError(
            f"forget: value: {proposal.field} holds no list to forget items of"
        )


def check_items_held(field: str, items: Sequence[str], held: Sequence[str], name: str) -> None:
    """Each item is one of the list's `held` items (by `item_key`): a request or a forget
    naming some items takes what it names (ADR 0160). `name` is the input's, for the 422."""
    if not held:
        raise InvalidOperationError(f"{name}: {field} holds no list to forget items of")
    keys = {item_key(i) for i in held}
    missing = [i for i in items if item_key(i) not in keys]
    if not items or missing:
        raise InvalidOperationError(f"{name}: {field} does not hold {', '.join(missing)}")


def evidence_refs(
    changes: Iterable[ChangeRecord],
    confirmed_in: Mapping[UUID, tuple[str, int]],
    field: str,
    asked_in: Iterable[tuple[str, int, str]] = (),
    decided_in: tuple[str, int] | None = None,
) -> list[JsonObject]:
    """Where the field's changes were said and confirmed, as ids: readable now, unreadable
    once the field's key is deleted. A rejected change's words count too: a
    reviewer judged the value, but the words were still the subject's about the field, and
    forgetting the field is the subject asking for them to go. (Changes of an earlier forget
    carry no evidence any more: their key is gone.)"""
    said: set[tuple[str, int]] = set()
    of_field: set[str] = set()
    for record in changes:
        if record.field != field:
            continue
        of_field.add(str(record.change_id))
        evidence = record.proposal.evidence
        if evidence is not None:
            said.add((evidence.session_id, evidence.message_index))
        if record.change_id in confirmed_in:
            said.add(confirmed_in[record.change_id])
    # The lines that asked about or decided one of its changes (`asked_in`: session, index,
    # change id): an agent's "is it still 50k?" restates the value.
    said.update((s, i) for s, i, change_id in asked_in if change_id in of_field)
    if decided_in is not None:
        said.add(decided_in)
    return [{"session_id": s, "message_index": i} for s, i in sorted(said)]
