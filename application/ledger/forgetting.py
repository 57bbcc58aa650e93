"""`ForgettingCommands`: forgetting, expiry and erasure.

A forget or an erasure records its event, then deletes the keys of what it forgets, so the
content is unreadable in the event store too. A deletion interrupted between the two is
finished from the recorded event: by the command's retry (the same command id replays as seen
and deletes the keys again), by a direct forget of the field, or by `finish_forgetting`, a
pass over the recorded forgets that every serving process runs at start-up and then
periodically (a retry answered from the response saved with the event never reaches the
ledger). A forget naming a line of a session stored whole under the subject's key (before
per-line keys) also rotates that key (`rotate_subject_key`), finished the same ways.

A reason that restates what it forgets is refused by the domain (`domain.restated`); the words
too common to count there are the stopword library's function words that memories' keywords
leave out too (`scoring.STOPWORDS`, ADR 0108).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from functools import partial
from typing import Any
from uuid import UUID

import structlog

from factledger.application.errors import NotFoundError
from factledger.application.ledger.cipher import (
    FORGOTTEN_LINE,
    PREFIX,
    ROTATED_FIELDS,
    SUMMARY,
    TRANSCRIPT,
    Resealed,
    ShreddingMapper,
    change_scope,
    field_scope,
    field_scopes_through,
    line_scope,
    line_sealed_again,
    sealed_again,
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
from factledger.application.memory.scoring import STOPWORDS
from factledger.domain.errors import FieldNotPresentError
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    FactForgotten,
    SubjectKeyRotated,
)
from factledger.domain.proposal import Decision
from factledger.domain.subject import Subject
from factledger.domain.values import JsonObject, JsonValue

log = structlog.get_logger(__name__)


class ForgettingCommands(LedgerCore):
    """The ledger's forget, expire and erase commands."""

    def forget_field(self, cmd: ForgetField) -> CommandResult:
        """Records the forgetting, then deletes the field's keys: from then on its values,
        conditions, quotes and rationales are unreadable in the event store too."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        try:
            result = self._run(
                cmd.tenant,
                cmd.subject_id,
                cmd.command_id,
                lambda s: (
                    partial(s.forget_items, cmd.field, cmd.items)
                    if cmd.items
                    else partial(s.forget_field, cmd.field)
                )(by=decision, reason=cmd.reason, at=self._now(), common_words=STOPWORDS),
            )
        except FieldNotPresentError:
            # A forget interrupted between its event and the key deletion: finish it.
            subject = self.subject(cmd.tenant, cmd.subject_id)
            if cmd.field in subject.forgotten_fields:
                self._finish(subject, self._recorded_forgets(subject.id, field=cmd.field))
            raise
        # `_run` deleted the keys of what the recorded forget names (`_shred`).
        return result

    def _shred(self, subject: Subject, forgets: Sequence[FactForgotten]) -> None:
        self._finish(subject, forgets)

    def _finish_forgets_of(self, subject: Subject, command_id: str) -> None:
        # Every forget of a field or of said lines leaves a mark (ADR 0174), a memory's its id.
        if not subject.forget_marks and not subject.forgotten_memories:
            return  # nothing was ever forgotten: no read of the stream
        forgets = [e for e in self._recorded_forgets(subject.id) if e.command_id == command_id]
        if forgets:
            self._finish(subject, forgets)

    def finish_forgetting(self, start: int = 1, *, limit: int = 500) -> tuple[int, int]:
        """Deletes again the keys of every forget recorded at notification `start` or later
        (at most `limit` of them), and the retired keys of every rotation of a subject's key:
        what an interrupted deletion left. Deleting a deleted key is a no-op, so a pass costs a
        topic-filtered read and a few statements per subject. Returns (events read, the
        position to start the next pass at)."""
        notifications = self.recorder.select_notifications(
            start, limit, topics=(FactForgotten.TOPIC, SubjectKeyRotated.TOPIC)
        )
        by_subject: dict[UUID, list[FactForgotten]] = {}
        for notification in notifications:
            event = self.mapper.to_domain_event(notification)
            if isinstance(event, FactForgotten):
                by_subject.setdefault(event.originator_id, []).append(event)
            elif isinstance(event, SubjectKeyRotated):
                deleted = self.keys.forget_prefix(event.retired_prefix)
                if deleted:
                    self._forget_keys(event.originator_id, already=deleted)
        for subject_id, forgets in by_subject.items():
            try:
                subject = self.subject(self.tenant_of(subject_id), subject_id)
            except NotFoundError:
                continue
            if not subject.erased:  # an erasure deleted every key of the subject
                self._finish(subject, forgets)
        following = notifications[-1].id + 1 if notifications else start
        return len(notifications), following

    def _recorded_forgets(
        self, subject_id: UUID, *, field: str | None = None
    ) -> list[FactForgotten]:
        # Only the forgets are decoded: the rest of the stream stays sealed.
        return [
            event
            for stored in self.recorder.select_events(subject_id)
            if stored.topic == FactForgotten.TOPIC
            and isinstance(event := self.mapper.to_domain_event(stored), FactForgotten)
            and (field is None or event.field == field)
        ]

    def _finish(self, subject: Subject, forgets: Sequence[FactForgotten]) -> None:
        """Deletes the keys these recorded forgets name: the lines and their sessions'
        summaries (a line is never sealed again); the changes they took (a field's, proposed
        before its forget; a memory's withdrawn ones), each under a key of its own; and the
        generations of the field's key each names, up to its own. Nothing recorded after a
        forget is sealed under any of those, so a field written again since keeps its words.

        A forget recorded before generations names none: its field's one scope (generation
        0) is deleted only while the field is still forgotten with nothing proposed since. A
        field written again by a process of that time sealed its new words under the key
        that survived; deleting it would take those too, so it is left for the field's next
        forget (which deletes both) and logged."""
        scopes: set[str] = set()
        for forget in forgets:
            lines = _refs(forget.evidence_refs)
            scopes.update(change_scope(subject.id, c) for c in _taken(subject, forget))
            if forget.field is not None and forget.key_generation is not None:
                scopes.update(field_scopes_through(subject.id, forget.field, forget.key_generation))
            elif forget.field is not None:
                if _still_forgotten(subject, forget):
                    scopes.add(field_scope(subject.id, forget.field))
                    mark = subject.forget_marks.get(forget.field)
                    lines |= set(mark.evidence) if mark is not None else set()
                else:
                    log.warning(
                        "ledger.forget_unfinished_field_written_again",
                        subject_id=str(subject.id),
                        position=forget.originator_version,
                    )
            scopes.update(line_scope(subject.id, session, index) for session, index in lines)
            scopes.update(summary_scope(subject.id, session) for session, _ in lines)
        if scopes:
            self._forget_keys(subject.id, *scopes)
        self._rotate_if_needed(subject)

    def _rotate_if_needed(self, subject: Subject) -> None:
        """Rotates the subject's key when a line some forget names is in a session stored
        whole under it (before per-line keys): deleting line keys cannot take those words."""
        if not isinstance(self.mapper, ShreddingMapper) or self._every_line_alone(subject.id):
            return
        lines = sorted(self._forgotten_refs(subject.id))
        if lines and self.lines_not_erased(subject.id, lines, whole_only=True):
            self.rotate_subject_key(subject.tenant, subject.id)

    def _every_line_alone(self, subject_id: UUID) -> bool:
        """Whether every session of the subject seals each line under a key of its own (as
        every session since per-line keys does): then no forget needs a rotation. One read
        of its stream the first time this process asks, none after (`LinesAlone`)."""
        known = self.lines_alone.known(subject_id)
        if known is not None:
            return known
        assert isinstance(self.mapper, ShreddingMapper)  # noqa: S101 - checked by the callers
        for stored in self.recorder.select_events(subject_id):
            found = self.mapper.lines_not_alone(stored)
            if found is not None and (found[1] is None or found[1]):
                return self.lines_alone.found(subject_id, alone=False)
        return self.lines_alone.found(subject_id, alone=True)

    def _forgotten_refs(self, subject_id: UUID) -> set[tuple[str, int]]:
        """Every line a recorded forget names."""
        return {ref for e in self._recorded_forgets(subject_id) for ref in _refs(e.evidence_refs)}

    def rotate_subject_key(self, tenant: str, subject_id: UUID) -> None:
        """Retires the subject's key, records what it sealed sealed again (an old session's
        transcript line by line, forgotten lines left out; the rest under the subject's next
        key), then deletes the retired key: the forgotten lines of old sessions are then
        unreadable in the event store too, and every reader reads the rest as before (the
        mapper opens the re-sealed values). Moving the key first means no save seals under it
        afterwards: a save that fetched it earlier loaded the subject before the rotation's
        event, so one of the two saves conflicts and is redone."""
        retired = f"{subject_scope(subject_id)}/~retired/"
        self.keys.retire(subject_scope(subject_id), retired + uuid.uuid4().hex)
        self._run(
            tenant,
            subject_id,
            None,
            lambda s: s.rotate_key(
                retired_prefix=retired, resealed=self._sealed_again(s), at=self._now()
            ),
        )
        # Every retired key of the subject goes, an interrupted rotation's too: what they
        # sealed is in the event just recorded.
        deleted = self.keys.forget_prefix(retired)
        log.info("ledger.subject_key_rotated", subject_id=str(subject_id), keys=deleted)
        self._forget_keys(subject_id, already=deleted)

    def _sealed_again(self, subject: Subject) -> list[JsonObject]:
        """What the subject's key (or a retired one) sealed, sealed again for a rotation."""
        mapper = self.mapper
        if not isinstance(mapper, ShreddingMapper):
            return []
        mapper.forget_cached()  # the retired key is still there: read through it, not around
        forgotten = self._forgotten_refs(subject.id)
        subject_key = self.keys.current(subject_scope(subject.id))
        entries: list[JsonObject] = []
        for stored in self.recorder.select_events(subject.id, lte=subject.version):
            if stored.topic in _NOT_SUBJECT_SEALED:
                continue
            raw = mapper.stored_state(stored)
            event = mapper.to_domain_event(stored)
            state, cls = vars(event), type(event)
            whole = isinstance(raw.get(TRANSCRIPT), str)
            for name in ROTATED_FIELDS:
                sealed = raw.get(name)
                value = state.get(name)
                if not (isinstance(sealed, str) and sealed.startswith(PREFIX)) or value is None:
                    continue  # in clear, absent, or already unreadable
                if name in (TRANSCRIPT, SUMMARY) and not whole:
                    continue  # under keys of their own
                again: JsonValue
                if name == TRANSCRIPT:
                    again = self._lines_again(subject.id, state, cls, value, forgotten)
                elif name == SUMMARY:
                    said = {ref for ref in forgotten if ref[0] == state["session_id"]}
                    scope = summary_scope(subject.id, str(state["session_id"]))
                    key = self.keys.current(scope)
                    again = None if said else sealed_again(key, value, state, cls, name)
                else:
                    again = sealed_again(subject_key, value, state, cls, name)
                entries.append(
                    {"version": stored.originator_version, "field": name, "value": again}
                )
        return entries

    def _lines_again(
        self,
        subject_id: UUID,
        state: dict[str, Any],
        cls: type[object],
        lines: list[Any],
        forgotten: set[tuple[str, int]],
    ) -> list[JsonValue]:
        session_id = str(state["session_id"])
        scopes = [line_scope(subject_id, session_id, index) for index in range(len(lines))]
        keys = self.keys.current_many(scopes)
        return [
            {**message, "text": None, FORGOTTEN_LINE: True}
            if (session_id, index) in forgotten
            or (isinstance(message, dict) and message.get(FORGOTTEN_LINE))
            else line_sealed_again(message, keys[scopes[index]], state, cls, index)
            for index, message in enumerate(lines)
        ]

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
        self, subject_id: UUID, lines: Sequence[tuple[str, int]], *, whole_only: bool = False
    ) -> list[tuple[str, int]]:
        """Those of `lines` a forget could not make unreadable: lines of sessions stored
        before each line had a key of its own (their transcript one ciphertext under the
        subject's key) that no rotation of that key has sealed again yet, or stored in clear
        (`whole_only`: the former alone, which a rotation takes)."""
        if not lines or not isinstance(self.mapper, ShreddingMapper):
            return []
        if self.lines_alone.known(subject_id):
            return []  # every line has a key of its own, which a forget deletes
        wanted = {session_id for session_id, _ in lines}
        exposed: dict[str, frozenset[int] | None] = {}
        rotated: Resealed | None = None
        alone = True
        for stored in self.recorder.select_events(subject_id):
            found = self.mapper.lines_not_alone(stored)
            if found is not None and (found[1] is None or found[1]):
                alone = False
            if found is None or found[0] not in wanted:
                continue
            if found[1] is None:
                # Stored whole: a rotation of the subject's key may have sealed it line by line.
                rotated = self.resealed_of(subject_id) if rotated is None else rotated
                if (stored.originator_version, TRANSCRIPT) in rotated:
                    continue
            elif whole_only:
                continue
            exposed[found[0]] = found[1]
        self.lines_alone.found(subject_id, alone=alone)
        return sorted(
            (session_id, index)
            for session_id, index in lines
            if session_id in exposed and ((kept := exposed[session_id]) is None or index in kept)
        )

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
                lambda s: s.erase(
                    by=decision, reason=cmd.reason, at=self._now(), common_words=STOPWORDS
                ),
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
        """Records that a backend memory must be forgotten, with the lines it was drawn from
        and the pending changes quoting them, then deletes their keys."""
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
                memory_text=cmd.memory_text,
                common_words=STOPWORDS,
            ),
        )
        # `_run` deleted the keys of the lines and changes the recorded forget names.
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


# Sealed under keys of their field or change, never the subject's.
_NOT_SUBJECT_SEALED = frozenset({ChangeProposed.TOPIC, ChangeConfirmed.TOPIC})


def _taken(subject: Subject, forget: FactForgotten) -> list[str]:
    """The changes whose words the forget takes: every change of its field proposed before
    it (the earlier forgets' ones again: a deleted key's deletion is a no-op) and the other
    fields' pending ones it withdrew for quoting the field's lines, or those a memory's
    forget withdrew."""
    if forget.field is None:
        # A request to forget what was said, approved, goes with the lines (ADR 0174).
        approved = [] if forget.request_id is None else [forget.request_id]
        return [*forget.withdrawn_changes, *approved]
    of_field = [
        str(change_id)
        for change_id, record in subject.changes.items()
        if record.field == forget.field and record.proposed_version < forget.originator_version
    ]
    return of_field + [c for c in forget.withdrawn_changes if c not in of_field]


def _still_forgotten(subject: Subject, forget: FactForgotten) -> bool:
    """Whether the forget's field holds nothing written after it (its key seals only what
    was forgotten)."""
    field = forget.field
    if field is None or field in subject.fields:
        return False
    mark = subject.forget_marks.get(field)
    latest = mark is not None and mark.version == forget.originator_version
    return latest and not subject.unforgotten_changes(field)


def _refs(evidence_refs: list[JsonObject]) -> set[tuple[str, int]]:
    return {
        (str(ref["session_id"]), index)
        for ref in evidence_refs
        if isinstance(index := ref.get("message_index"), int)
    }
