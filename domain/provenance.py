"""Who did what, on what evidence: actors, origins, operations and evidence of a change."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from factledger.domain.errors import InvalidValueError
from factledger.domain.text import check_text
from factledger.domain.values import MAX_TEXT, Immutable, JsonObject, JsonValue

MAX_ACTOR_ID = 200
MAX_QUOTE = MAX_TEXT  # the evidence quote: at most as long as a text value
MAX_REASON = 500  # why a change was rejected, a fact forgotten, a subject erased


class ActorKind(StrEnum):
    SUBJECT = "subject"  # the person, customer or lead the profile is about
    STAFF = "staff"  # an authorised human reviewer
    AGENT = "agent"  # an AI agent talking to the subject
    MODEL = "model"  # an extraction model
    SYSTEM = "system"  # factledger itself (imports, maintenance)


# Confirming or rejecting is a decision only a person may take.
DECIDERS = frozenset({ActorKind.SUBJECT, ActorKind.STAFF})
# Who may never relay the subject's words: the agent talking to them (its words would pass
# for theirs) and a model. The channel that heard them does (a service, or staff taking a
# call by hand).
RELAYS_NEVER = frozenset({ActorKind.AGENT, ActorKind.MODEL})


class Origin(StrEnum):
    STATED = "stated"  # the subject said it
    INFERRED = "inferred"  # a model concluded it


class Operation(StrEnum):
    SET = "set"
    UNSET = "unset"
    APPEND = "append"  # adds the items of a list value to a list field
    # Takes the items of a list value out of a list field ("the cardiologist stopped the
    # aspirin"): the other items stay, and a list left empty leaves the field absent.
    REMOVE = "remove"
    # Asks to forget the field: a request the subject said in conversation, pending like any
    # change; approving it forgets the field (its values and the words that stated them).
    FORGET = "forget"
    # Asks to forget what the subject said on some transcript lines, when what they asked
    # about is no profile field ("what I told you about my ex"): its field is the reserved
    # `domain.said_lines.SAID_LINES`, its value the lines; approving it forgets those lines
    # and the memories drawn from them (ADR 0174).
    FORGET_SAID = "forget_said"


class ChangeStatus(StrEnum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    FORGOTTEN = "forgotten"  # withdrawn because its field was forgotten
    SUPERSEDED = "superseded"  # replaced by a newer pending change of the same field


# A change that still stands as something the subject said: open, decided for, or replaced by
# a newer one; a rejected or forgotten one is not theirs.
STANDING = frozenset({ChangeStatus.PENDING, ChangeStatus.CONFIRMED, ChangeStatus.SUPERSEDED})

# The operations whose value is something the subject holds: a removal's items and a request
# to forget's items (ADR 0159, 0160) are what goes, never a value to offer or to retire.
STATES_VALUE = frozenset({Operation.SET, Operation.APPEND})

# Requests to forget: pending like any change, approved by forgetting; their value (items of a
# list, or lines) is what would go, never something the subject holds.
REQUESTS_TO_FORGET = frozenset({Operation.FORGET, Operation.FORGET_SAID})


@dataclass(frozen=True, slots=True)
class Actor(Immutable):
    kind: ActorKind
    id: str

    def __post_init__(self) -> None:
        if not self.id.strip() or len(self.id) > MAX_ACTOR_ID:
            raise InvalidValueError(f"actor.id: must be 1..{MAX_ACTOR_ID} characters")

    def to_payload(self) -> JsonObject:
        return {"kind": self.kind.value, "id": self.id}

    @classmethod
    def from_payload(cls, payload: dict[str, JsonValue]) -> Actor:
        return cls(ActorKind(str(payload["kind"])), str(payload["id"]))


def check_reason(reason: str) -> None:
    """Checked when a decision is taken; replays trust the reasons already recorded."""
    if len(reason) > MAX_REASON:
        raise InvalidValueError(f"reason: at most {MAX_REASON} characters")
    check_text(reason, "reason")


@dataclass(frozen=True, slots=True)
class Evidence(Immutable):
    """Where in a recorded session something was said: the message and the exact quote."""

    session_id: str
    message_index: int
    quote: str

    def __post_init__(self) -> None:
        if self.message_index < 0 or not self.quote.strip():
            raise InvalidValueError("evidence: needs a message index >= 0 and a quote")

    def to_payload(self) -> JsonObject:
        return {
            "session_id": self.session_id,
            "message_index": self.message_index,
            "quote": self.quote,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, JsonValue]) -> Evidence:
        index = payload["message_index"]
        return cls(
            str(payload["session_id"]),
            int(index) if isinstance(index, int) else -1,
            str(payload["quote"]),
        )
