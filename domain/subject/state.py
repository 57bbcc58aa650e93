"""What a subject holds, the questions asked of it, and the checks every command shares.

`SubjectState` is the base of `Subject`; its containers are copied (not their items) when the
library hands a cached subject to a command, so what a container holds must be immutable.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from eventsourcing.domain import Aggregate

from factledger.domain.errors import ChangeNotFoundError, SubjectErasedError, TimeWentBackwardsError
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    ChangeSuperseded,
    FactForgotten,
    FieldExpirySet,
    MemoryExpirySet,
    SessionRecorded,
    SessionReviewed,
    SubjectErased,
    SubjectKeyRotated,
    SubjectRegistered,
)
from factledger.domain.forget_mark import ForgetMark
from factledger.domain.proposal import ChangeRecord, CurrentField, item_key
from factledger.domain.provenance import Actor, ChangeStatus, Operation
from factledger.domain.sessions import SessionInfo
from factledger.domain.values import ListValue

SEEN_COMMANDS_WINDOW = 500  # enough to absorb client retries; older ids are long settled


class SubjectState(Aggregate):
    """The subject's state, rebuilt by its events' `apply` only."""

    Created = SubjectRegistered  # the library looks the creation event up by this name
    SessionRecorded = SessionRecorded
    ChangeProposed = ChangeProposed
    ChangeConfirmed = ChangeConfirmed
    ChangeRejected = ChangeRejected
    FactForgotten = FactForgotten
    SubjectErased = SubjectErased
    MemoryExpirySet = MemoryExpirySet
    ChangeSuperseded = ChangeSuperseded
    SessionReviewed = SessionReviewed
    FieldExpirySet = FieldExpirySet
    SubjectKeyRotated = SubjectKeyRotated

    def __init__(self, tenant: str, kind: str, external_ref: str | None) -> None:
        # None once erased: the reference was shredded with the subject's key.
        self.tenant, self.kind, self.external_ref = tenant, kind, external_ref
        self.sessions: dict[str, SessionInfo] = {}
        self.changes: dict[UUID, ChangeRecord] = {}
        self.fields: dict[str, CurrentField] = {}
        self.field_changed_in: dict[str, int] = {}  # field -> profile version of its last change
        self.forgotten_memories: set[str] = set()
        self.memory_expiries: dict[str, datetime] = {}  # memory id -> valid until
        # change id -> where the subject confirmed it (session id, message index)
        self.confirmed_in: dict[UUID, tuple[str, int]] = {}
        self.erased = False
        self.forgotten_fields: set[str] = set()  # ever forgotten (keys must be gone)
        self.forget_marks: dict[str, ForgetMark] = {}  # field -> its latest forget (recall)
        # field -> the generation of its key that seals what is said of it from now on (the
        # field's forgets so far; absent: 0). Each forget shreds the generation it names.
        self.key_generations: dict[str, int] = {}
        # memory id -> the pending changes its forget withdrew (they quoted its lines)
        self.memory_withdrew: dict[str, tuple[UUID, ...]] = {}
        # field -> the changes its latest forget took (withdrawn or already decided), in order
        self.forgot_changes: dict[str, tuple[UUID, ...]] = {}
        self.profile_version = 0
        self.seen_commands: list[str] = []
        self.superseded_by: dict[UUID, UUID] = {}  # superseded change id -> the newer one
        self.reviewed: set[str] = set()  # sessions a model reviewed for proposals
        # a caller's pending change -> the models whose review of its session agreed with it
        self.agreed_by: dict[UUID, tuple[Actor, ...]] = {}

    def __deepcopy__(self, memo: dict[int, object]) -> SubjectState:
        """The library copies a cached subject for every command. Everything a container holds
        is an immutable value (a decision replaces a change record), so copying the
        containers is enough: a C-level copy per container, not a Python step per item, which
        keeps a command's cost nearly flat in the subject's history."""
        clone = object.__new__(type(self))
        for name, value in self.__dict__.items():
            if isinstance(value, dict | set | list):
                value = value.copy()
            clone.__dict__[name] = value
        return clone

    # -- queries on state -------------------------------------------------------------------

    def key_generation(self, field: str) -> int:
        """The generation of the field's key that a change of it recorded now is sealed
        under: one past the generation its latest forget shredded, 0 before any forget."""
        return self.key_generations.get(field, 0)

    def has_seen(self, command_id: str) -> bool:
        return command_id in self.seen_commands

    def has_reviewed(self, session_id: str) -> bool:
        """A session is reviewed once, by whichever model came first: a later model (a new
        extractor version) reviews the sessions recorded from then on, never old ones again."""
        return session_id in self.reviewed

    def change(self, change_id: UUID) -> ChangeRecord:
        record = self.changes.get(change_id)
        if record is None:
            raise ChangeNotFoundError(f"change {change_id} on subject {self.id}")
        return record

    def unforgotten_changes(self, field: str) -> list[UUID]:
        """The field's changes proposed since its latest forget, whatever their status: their
        words are readable until the field is forgotten again (an earlier forget deleted the
        key of the ones before it)."""
        mark = self.forget_marks.get(field)
        since = 0 if mark is None else mark.version
        return [
            change_id
            for change_id, record in self.changes.items()
            if record.field == field and record.proposed_version > since
        ]

    def held_items(self, field: str) -> tuple[str, ...]:
        """The items of the field's list the subject holds: the profile's, then those of its
        pending extensions, less those a pending removal takes off; each once, as first
        said (told apart by `item_key`). Empty when the field holds no list."""
        current = self.fields.get(field)
        items = (
            list(current.value.items) if current and isinstance(current.value, ListValue) else []
        )
        removed: set[str] = set()
        for record in self.changes.values():
            value = record.proposal.value
            if record.field != field or record.status is not ChangeStatus.PENDING:
                continue
            if not isinstance(value, ListValue):
                continue
            if record.operation in (Operation.APPEND, Operation.SET):
                items += value.items
            elif record.operation is Operation.REMOVE:
                removed |= {item_key(i) for i in value.items}
        held: dict[str, str] = {}
        for item in items:
            if (key := item_key(item)) not in removed:
                held.setdefault(key, item)
        return tuple(held.values())

    def holds_words_of(self, field: str) -> bool:
        """Whether forgetting the field would take anything: a value, or a change's words
        since its latest forget other than a request to forget it."""
        if field in self.fields:
            return True
        return any(
            self.changes[c].operation is not Operation.FORGET
            for c in self.unforgotten_changes(field)
        )

    # -- shared by commands and mutators ------------------------------------------------------

    def _check_live(self) -> None:
        if self.erased:
            raise SubjectErasedError(f"subject {self.id}")

    def _check_time(self, at: datetime) -> None:
        self._check_live()
        if at < self.modified_on:
            raise TimeWentBackwardsError(f"subject {self.id}: event dated before the last one")

    def remember_command(self, command_id: str | None) -> None:
        """Called by event mutators: keeps a bounded window of applied command ids."""
        if command_id is not None:
            self.seen_commands = [*self.seen_commands, command_id][-SEEN_COMMANDS_WINDOW:]

    def set_status(self, change_id: UUID, status: ChangeStatus) -> None:
        """Called by event mutators: a new record with the status (records are shared by
        copies of the subject, so never changed in place)."""
        self.changes[change_id] = self.changes[change_id].with_status(status)
