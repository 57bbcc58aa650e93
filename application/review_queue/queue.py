"""What a reviewer asks of the queue: a filter, a page after (or before) a cursor, the exact
count, and the groups of identical proposals across subjects.

The queue is ordered by recording (the proposal's position in the ledger's log), oldest first:
positions are unique and never move, so a cursor is one position and a page is an index range.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from datetime import datetime

from factledger.application.json_text import dumps_sorted
from factledger.application.ledger.queries import PendingChange
from factledger.domain.provenance import Actor, Origin
from factledger.domain.values import JsonValue

MAX_PAGE = 200
MAX_TEXT = 200


def actor_label(actor: Actor) -> str:
    return f"{actor.kind.value}:{actor.id}"


def group_key(
    field_name: str,
    operation: str,
    value: JsonValue,
    condition: str | None,
    origin: str,
) -> str:
    """Proposals with the same key say the same thing of different subjects (the same field,
    operation, value, condition and origin); who proposed it and from which evidence differ."""
    text = dumps_sorted([field_name, operation, value, condition, origin])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class QueueFilter:
    """Each set filter must match. `text` matches, case-insensitively, a part of the field name
    or of the subject's reference; `proposed_before` / `proposed_after` bound the age (when
    the ledger recorded the proposal); `proposer` is `kind:id`."""

    kind: str | None = None
    field: str | None = None
    origin: Origin | None = None
    proposer: str | None = None
    conversation_type: str | None = None
    text: str | None = None
    proposed_before: datetime | None = None
    proposed_after: datetime | None = None
    group: str | None = None
    subject_id: str | None = None
    up_to: int | None = None  # positions at most this (what a reviewer saw)

    def is_empty(self) -> bool:
        return self == QueueFilter()


@dataclass(frozen=True, slots=True)
class QueueCursor:
    """A page starts after `after` (forward) or ends before `before` (backward)."""

    after: int | None = None
    before: int | None = None


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One pending proposal with what the queue knows of its subject and its conversation."""

    position: int
    change: PendingChange
    kind: str
    external_ref: str
    group_key: str
    # When the subject said it (the evidence's conversation started); None: no evidence, or
    # its conversation is not recorded.
    said_at: datetime | None
    conversation_type: str | None


@dataclass(frozen=True, slots=True)
class QueuePage:
    entries: list[QueueEntry]
    total: int  # every pending proposal the filter matches, not only this page's
    next_cursor: QueueCursor | None
    previous_cursor: QueueCursor | None
    # The page's snapshot (0: nothing matches): the newest position the filter matches, or,
    # for an age filter or a text search, the tenant's newest; no matching row lies after
    # either.
    last_position: int


@dataclass(frozen=True, slots=True)
class QueueGroup:
    """Identical proposals across subjects; `sample` is the oldest of them."""

    key: str
    count: int
    subjects: int
    sample: QueueEntry


@dataclass(frozen=True, slots=True)
class GroupPage:
    groups: list[QueueGroup]
    total: int  # groups the filter matches
    next_offset: int | None
    last_position: int  # the newest proposal the filter matches (0: none)


@dataclass(frozen=True, slots=True)
class Selected:
    """A pending change picked by a filter, for a decision on all of them."""

    position: int
    subject_id_text: str
    change_id_text: str


@dataclass(frozen=True, slots=True)
class QueueChoices:
    """The values each filter can take now (pending proposals only)."""

    kind: list[str] = dataclasses.field(default_factory=list)
    field: list[str] = dataclasses.field(default_factory=list)
    proposer: list[str] = dataclasses.field(default_factory=list)
    conversation_type: list[str] = dataclasses.field(default_factory=list)
