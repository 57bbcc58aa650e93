"""`ForgettingCommands`: forgetting, expiry and erasure.

A forget or an erasure records its event, then deletes the keys of what it forgets, so the
content is unreadable in the event store too; a retry (or any later command) finishes a
deletion that was interrupted between the two.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from uuid import UUID

import structlog

from factledger.application.ledger.cipher import (
    ShreddingMapper,
    field_scope,
    line_scope,
    subject_scope,
    summary_scope,
)
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
from factledger.domain.events import FactForgotten
from factledger.domain.proposal import Decision
from factledger.domain.values import JsonObject

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
                self._forget_keys(
                    cmd.subject_id,
                    scope,
                    *self._words_of(cmd.subject_id, field=cmd.field, memory_id=None),
                )
            raise
        self._forget_keys(
            cmd.subject_id, scope, *self._words_of(cmd.subject_id, field=cmd.field, memory_id=None)
        )
        return result

    def _shred_fields(self, subject_id: UUID, fields: Sequence[str]) -> None:
        for field in fields:
            self._forget_keys(
                subject_id,
                field_scope(subject_id, field),
                *self._words_of(subject_id, field=field, memory_id=None),
            )

    def forgotten_lines(
        self, subject_id: UUID, *, field: str | None, memory_id: str | None
    ) -> list[tuple[str, int]]:
        """The transcript lines (session id, message index) whose words forgetting this
        field or memory took: the lines its forgets name (`FactForgotten.evidence_refs`: a
        field's evidence and the lines that asked about or decided its changes; a memory's
        sources)."""
        return sorted(
            ref
            for e in self.events.get(subject_id)
            if isinstance(e, FactForgotten)
            and (e.field == field if field is not None else e.memory_id == memory_id)
            for ref in _refs(e.evidence_refs)
        )

    def lines_not_erased(
        self, subject_id: UUID, lines: Sequence[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        """Those of `lines` a forget could not make unreadable: lines of sessions stored
        before each line had a key of its own (their transcript is one ciphertext under the
        subject's key, which only an erasure deletes), or stored in clear."""
        if not lines or not isinstance(self.mapper, ShreddingMapper):
            return []
        wanted = {session_id for session_id, _ in lines}
        exposed: dict[str, frozenset[int] | None] = {}
        for stored in self.recorder.select_events(subject_id):
            found = self.mapper.lines_not_alone(stored)
            if found is not None and found[0] in wanted:
                exposed[found[0]] = found[1]
        return sorted(
            (session_id, index)
            for session_id, index in lines
            if session_id in exposed and ((kept := exposed[session_id]) is None or index in kept)
        )

    def _words_of(self, subject_id: UUID, *, field: str | None, memory_id: str | None) -> set[str]:
        """The key scopes of those lines and of their sessions' summaries (a summary restates
        what was said)."""
        lines = self.forgotten_lines(subject_id, field=field, memory_id=memory_id)
        scopes = {line_scope(subject_id, session_id, index) for session_id, index in lines}
        scopes.update(summary_scope(subject_id, session_id) for session_id, _ in lines)
        return scopes

    def _forget_keys(self, subject_id: UUID, *scopes: str, already: int = 0) -> None:
        deleted = already + self.keys.forget_many(scopes)
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
                erasing=True,
            )
        finally:
            subject = self.subject(cmd.tenant, cmd.subject_id)
            if subject.erased:
                # Every scope of the subject starts with its id: fields, lines, summaries,
                # snapshots and the subject's own key go in one statement.
                erased = self.keys.forget_prefix(subject_scope(cmd.subject_id))
                self._forget_keys(cmd.subject_id, subject_scope(cmd.subject_id), already=erased)
        return result

    def forget_memory(self, cmd: ForgetMemory) -> CommandResult:
        """Records that a backend memory must be forgotten, with the lines it was drawn from,
        then deletes those lines' keys."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        result = self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.forget_memory(
                cmd.memory_id,
                by=decision,
                reason=cmd.reason,
                at=self._now(),
                evidence_refs=cmd.evidence_refs,
            ),
        )
        words = self._words_of(cmd.subject_id, field=None, memory_id=cmd.memory_id)
        if words:
            self._forget_keys(cmd.subject_id, *words)
        return result

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


def _refs(evidence_refs: list[JsonObject]) -> set[tuple[str, int]]:
    return {
        (str(ref["session_id"]), index)
        for ref in evidence_refs
        if isinstance(index := ref.get("message_index"), int)
    }
