"""Work items of the sync from the ledger to the memory backend, and its dead letters.

Items carry references only (event position, subject id, target ids), never content: the
worker re-reads the event when it processes an item, so the sync tables hold nothing a person
said and need no erasure of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from uuid import UUID

MAX_ATTEMPTS = 3


class SyncKind(StrEnum):
    TRANSCRIPT = "transcript"  # SessionRecorded -> the extraction path (instant mode)
    SUMMARY = "summary"  # SessionRecorded's summary -> a verbatim record
    PROPOSAL = "proposal"  # ChangeProposed -> a verbatim record
    PROFILE_VERSION = "profile_version"  # every new profile version -> a verbatim record
    FORGET = "forget"  # FactForgotten -> forget the matching memories, delete the records
    ERASE = "erase"  # SubjectErased -> drop the subject's whole namespace
    EXPIRE = "expire"  # MemoryExpirySet -> the memory's expiry in the backend
    PROPOSE = "propose"  # SessionRecorded -> the model's proposals, back into the ledger
    # ChangeRejected -> the rejected value's memories and the proposal's record leave recall
    REJECT = "reject"
    # ChangeConfirmed -> the memories of the values the approved change replaced leave recall
    RETIRE = "retire"


class ItemState(StrEnum):
    PENDING = "pending"
    DEAD = "dead"


@dataclass(frozen=True, slots=True)
class SyncItem:
    """One write to the backend, derived from one event.

    - `item_id` is `<position>.<n>`: deterministic, so feeding the same event twice adds nothing.
    - `targets` are the backend ids the item writes or forgets (document, record or memory
      ids, or `field:<name>`), for dead-letter listings.
    - `tenant` is the subject's, so a tenant's dead letters are found without the ledger.
    """

    item_id: str
    position: int
    subject_id: UUID
    kind: SyncKind
    targets: tuple[str, ...]
    attempts: int = 0
    tenant: str = field(kw_only=True)


def item_order(item_id: str) -> tuple[int, int]:
    """Where an item sorts: its event's position, then its place among the event's items."""
    position, n = item_id.split(".", 1)
    return int(position), int(n)


@dataclass(frozen=True, slots=True)
class FieldTrace:
    """Where a field's values went before it was forgotten: the profile versions that held it
    and the changes proposed for it (their backend record ids derive from these)."""

    profile_versions: tuple[int, ...] = ()
    change_ids: tuple[UUID, ...] = ()


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """An item that failed `MAX_ATTEMPTS` times: error type and ids only."""

    item_id: str
    position: int
    subject_id: UUID
    kind: SyncKind
    targets: tuple[str, ...]
    attempts: int
    error_type: str


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one pass of the worker did."""

    fed: int = 0  # items created from new events
    done: int = 0
    retried: int = 0  # failed, will be tried again after a backoff
    dead: int = 0  # failed for the last time, moved to the dead letters
    skipped: int = 0  # completed without a write: memory is off for the subject's tenant
