"""`ForgettingCommands`: forgetting, expiry and erasure.

A forget or an erasure records its event, then deletes the keys of what it forgets, so the
content is unreadable in the event store too; a retry (or any later command) finishes a
deletion that was interrupted between the two.
"""

from __future__ import annotations

import contextlib
from uuid import UUID

import structlog

from factledger.application.ledger.cipher import ShreddingMapper, field_scope
from factledger.application.ledger.commands import (
    CommandResult,
    EraseSubject,
    ExpireField,
    ExpireMemory,
    ForgetField,
    ForgetMemory,
)
from factledger.application.ledger.core import LedgerCore
from factledger.application.ledger.snapshots.codec import snapshot_scope
from factledger.domain.errors import FieldNotPresentError
from factledger.domain.proposal import Decision

log = structlog.get_logger(__name__)


class ForgettingCommands(LedgerCore):
    """The ledger's forget, expire and erase commands."""

    def forget_field(self, cmd: ForgetField) -> CommandResult:
        """Records the forgetting, then deletes the field's keys: from then on its values,
        conditions, quotes and rationales are unreadable in the event store too."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        scope = field_scope(cmd.subject_id, cmd.field)
        try:
            result = self._run(
                cmd.tenant,
                cmd.subject_id,
                cmd.command_id,
                lambda s: s.forget_field(cmd.field, by=decision, reason=cmd.reason, at=self._now()),
            )
        except FieldNotPresentError:
            # A forget interrupted between its event and the key deletion: finish it.
            if cmd.field in self.subject(cmd.tenant, cmd.subject_id).forgotten_fields:
                self._forget_keys(cmd.subject_id, scope)
            raise
        self._forget_keys(cmd.subject_id, scope)
        return result

    def _forget_keys(self, subject_id: UUID, scope: str) -> None:
        deleted = self.keys.forget(scope)
        # Snapshots hold every field's words in clear inside their seal: they go with any
        # key, even while snapshots are switched off (ones taken before may remain).
        deleted += self.keys.forget(snapshot_scope(subject_id))
        log.info("ledger.keys_forgotten", subject_id=str(subject_id), keys=deleted)
        if isinstance(self.mapper, ShreddingMapper):
            self.mapper.forget_cached()
        # The cached subject still holds the forgotten values in memory: drop it.
        cache = self.repository.cache
        if cache is not None:
            with contextlib.suppress(KeyError):
                cache.get(subject_id, evict=True)

    def erase_subject(self, cmd: EraseSubject) -> CommandResult:
        """Records the erasure, then deletes the subject's key and every field key. A retry,
        or any later command, finishes an erasure whose key deletion was interrupted."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        try:
            result = self._run(
                cmd.tenant,
                cmd.subject_id,
                cmd.command_id,
                lambda s: s.erase(by=decision, reason=cmd.reason, at=self._now()),
            )
        finally:
            subject = self.subject(cmd.tenant, cmd.subject_id)
            if subject.erased:
                for field in sorted(subject.forgotten_fields):
                    self.keys.forget(field_scope(cmd.subject_id, field))
                self._forget_keys(cmd.subject_id, str(cmd.subject_id))
        return result

    def forget_memory(self, cmd: ForgetMemory) -> CommandResult:
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.forget_memory(
                cmd.memory_id, by=decision, reason=cmd.reason, at=self._now()
            ),
        )

    def expire_memory(self, cmd: ExpireMemory) -> CommandResult:
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.expire_memory(cmd.memory_id, cmd.valid_until, by=decision, at=self._now()),
        )

    def expire_field(self, cmd: ExpireField) -> CommandResult:
        """Records the field's expiry; from `valid_until` on, readers that hold a clock stop
        serving it (nothing is written at that time)."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.expire_field(
                cmd.field, cmd.valid_until, by=decision, at=self._now(), reason=cmd.reason
            ),
        )
