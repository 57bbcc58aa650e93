"""The subject's forgetting and expiry commands: a field or a backend memory forgotten, a
field or memory served until a time, and erasure of the whole subject."""

from __future__ import annotations

from datetime import datetime

from factledger.domain.errors import FieldNotHeldError, FieldNotPresentError, InvalidOperationError
from factledger.domain.proposal import Decision, evidence_refs
from factledger.domain.provenance import ChangeStatus, check_reason
from factledger.domain.subject.state import SubjectState
from factledger.domain.text import check_text


class SubjectForgetting(SubjectState):
    """Commands that take something out of what the subject serves."""

    def forget_field(self, field: str, *, by: Decision, reason: str, at: datetime) -> None:
        """Forgets a field: the next version lacks it; its pending changes are withdrawn
        (status `forgotten`). A field that is only proposed, or whose proposals were all
        rejected, is forgotten too: its words are the subject's whatever a reviewer decided.
        Refused only when nothing of the field is left to forget."""
        self._check_live()
        check_reason(reason)
        if field not in self.fields and not self.unforgotten_changes(field):
            raise FieldNotPresentError(f"field {field} on subject {self.id}")
        self._check_time(at)
        withdrawn = [
            str(c.change_id)
            for c in self.changes.values()
            if c.field == field and c.status is ChangeStatus.PENDING
        ]
        self.trigger_event(
            self.FactForgotten,
            timestamp=at,
            field=field,
            memory_id=None,
            requested_by=by.by.to_payload(),
            reason=reason,
            profile_version=self.profile_version + 1,
            withdrawn_changes=withdrawn,
            command_id=by.command_id,
            evidence_refs=evidence_refs(self.changes.values(), self.confirmed_in, field),
        )

    def forget_memory(self, memory_id: str, *, by: Decision, reason: str, at: datetime) -> None:
        """Records that a backend memory must be forgotten (the sync worker acts on it)."""
        self._check_live()
        check_reason(reason)
        check_text(memory_id, "memory_id")
        if memory_id in self.forgotten_memories:
            return
        self._check_time(at)
        self.trigger_event(
            self.FactForgotten,
            timestamp=at,
            field=None,
            memory_id=memory_id,
            requested_by=by.by.to_payload(),
            reason=reason,
            profile_version=None,
            withdrawn_changes=[],
            command_id=by.command_id,
            evidence_refs=[],
        )

    def expire_memory(
        self, memory_id: str, valid_until: datetime, *, by: Decision, at: datetime
    ) -> None:
        """Records until when a backend memory is valid (the sync sets it in the backend);
        setting the same time again records nothing."""
        self._check_live()
        if valid_until.tzinfo is None:
            raise InvalidOperationError("valid_until: needs a time zone")
        if self.memory_expiries.get(memory_id) == valid_until:
            return
        self._check_time(at)
        self.trigger_event(
            self.MemoryExpirySet,
            timestamp=at,
            memory_id=memory_id,
            valid_until=valid_until,
            requested_by=by.by.to_payload(),
            command_id=by.command_id,
        )

    def expire_field(
        self,
        field: str,
        valid_until: datetime,
        *,
        by: Decision,
        at: datetime,
        reason: str | None = None,
    ) -> None:
        """Records until when a field of the current profile is served; setting the same time
        again records nothing. A time in the past stops serving it at once."""
        self._check_live()
        if valid_until.tzinfo is None:
            raise InvalidOperationError("valid_until: needs a time zone")
        if reason is not None:
            check_reason(reason)
        current = self.fields.get(field)
        if current is None:
            raise FieldNotHeldError(f"field {field} on subject {self.id}")
        if current.valid_until == valid_until:
            return
        self._check_time(at)
        self.trigger_event(
            self.FieldExpirySet,
            timestamp=at,
            field=field,
            valid_until=valid_until,
            requested_by=by.by.to_payload(),
            reason=reason,
            command_id=by.command_id,
        )

    def erase(self, *, by: Decision, reason: str, at: datetime) -> None:
        """Erases the subject: its keys go (transcripts and every field) and it takes no
        more commands; the stream keeps only its structure."""
        check_reason(reason)
        self._check_time(at)
        self.trigger_event(
            self.SubjectErased,
            timestamp=at,
            requested_by=by.by.to_payload(),
            reason=reason,
            fields=sorted({c.field for c in self.changes.values()}),
            command_id=by.command_id,
        )
