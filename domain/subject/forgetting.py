"""The subject's forgetting and expiry commands: a field or a backend memory forgotten, a
field or memory served until a time, and erasure of the whole subject."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import datetime
from uuid import UUID

from factledger.domain.errors import FieldNotHeldError, FieldNotPresentError, InvalidOperationError
from factledger.domain.proposal import (
    ChangeRecord,
    Decision,
    check_items_held,
    evidence_refs,
    kept_items,
    standing_of,
)
from factledger.domain.provenance import (
    REQUESTS_TO_FORGET,
    ChangeStatus,
    Operation,
    check_reason,
)
from factledger.domain.restated import check_not_restated
from factledger.domain.said_lines import SAID_LINES, parse_line_refs
from factledger.domain.subject.state import SubjectState
from factledger.domain.text import check_text
from factledger.domain.values import JsonObject, ListValue, render


class SubjectForgetting(SubjectState):
    """Commands that take something out of what the subject serves."""

    def _words_of_field(self, field: str | None) -> Iterator[str]:
        """What a forget of `field` takes (every field's, for None): its values, conditions,
        quotes and rationales, and the lines its changes quote."""
        for name, current in self.fields.items():
            if field is None or name == field:
                yield render(current.value)
                if current.condition:
                    yield current.condition
        for change in self.changes.values():
            proposal = change.proposal
            if field is not None and proposal.field != field:
                continue
            if proposal.value is not None:
                yield render(proposal.value)
            yield from (t for t in (proposal.condition, proposal.rationale) if t)
            if proposal.evidence is not None:
                yield proposal.evidence.quote
                yield from self._lines(
                    [(proposal.evidence.session_id, proposal.evidence.message_index)]
                )

    def _lines(self, refs: Iterable[tuple[str, int]]) -> Iterator[str]:
        for session_id, index in refs:
            session = self.sessions.get(session_id)
            if session is not None and 0 <= index < len(session.messages):
                yield session.messages[index][1]

    def _all_lines(self) -> Iterator[str]:
        for session in self.sessions.values():
            yield from (text for _, text in session.messages)

    def forget_field(
        self,
        field: str,
        *,
        by: Decision,
        reason: str,
        at: datetime,
        request: UUID | None = None,
        common_words: Collection[str] = frozenset(),
        kept: Sequence[str] = (),
    ) -> None:
        """Forgets a field: the next version lacks it (or, with `kept`, holds only those items
        of its list, standing as the field stood: ADR 0160); its pending changes are withdrawn
        (status `forgotten`), and so is any other field's pending change quoting a line the
        field was said, asked or decided in (a reader may have read the same words as
        another field: they would outlive the forget in it). A field that is only proposed,
        or whose proposals were all rejected, is forgotten too: its words are the subject's
        whatever a reviewer decided. Refused only when nothing of the field is left to
        forget. `request` is the pending request to forget the field that this forget
        approves (confirmed, not withdrawn). `common_words` are left out when the reason is
        checked for restating the field's words (`domain.restated`)."""
        self._check_live()
        check_reason(reason)
        if field == SAID_LINES:
            raise InvalidOperationError(
                f"field: {SAID_LINES} is reserved: what was said goes by approving a request "
                "to forget it (operation forget_said), or by forgetting a memory"
            )
        if field not in self.fields and not self.unforgotten_changes(field):
            raise FieldNotPresentError(f"field {field} on subject {self.id}")
        if request is None:  # an approved request's reason is the ledger's, naming the request
            check_not_restated(reason, self._words_of_field(field), common_words)
        self._check_time(at)
        refs = evidence_refs(
            self.changes.values(),
            self.confirmed_in,
            field,
            asked_in=(
                (session.session_id, index, change_id)
                for session in self.sessions.values()
                for index, change_id in enumerate(session.message_changes)
                if change_id is not None
            ),
            # The subject's words approving a request to forget the field go with it.
            decided_in=None
            if by.evidence is None
            else (by.evidence.session_id, by.evidence.message_index),
        )
        said = {
            (session_id, index)
            for ref in refs
            if isinstance(session_id := ref["session_id"], str)
            and isinstance(index := ref["message_index"], int)
        }
        current = self.fields.get(field)
        withdrawn = [
            str(c.change_id)
            for c in self.changes.values()
            if c.status is ChangeStatus.PENDING
            and c.change_id != request
            and (c.field == field or _quotes(c, said))
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
            request_id=None if request is None else str(request),
            relayed_by=None if by.relayed_by is None else by.relayed_by.to_payload(),
            key_generation=self.key_generation(field),
            evidence_refs=refs,
            kept=list(kept) if kept and current is not None else None,
            kept_standing=standing_of(current) if kept and current is not None else None,
        )

    def forget_items(
        self,
        field: str,
        items: Sequence[str],
        *,
        by: Decision,
        reason: str,
        at: datetime,
        common_words: Collection[str] = frozenset(),
    ) -> None:
        """Forgets some items of a list field, asked directly (ADR 0160): the field's words go
        as with `forget_field`, and the next version keeps the list's other items. Refused,
        naming `items`, unless the field's list (confirmed or pending) holds every one of them."""
        check_items_held(field, items, self.held_items(field), "items")
        current = self.fields.get(field)
        self.forget_field(
            field,
            by=by,
            reason=reason,
            at=at,
            common_words=common_words,
            kept=kept_items(None if current is None else current.value, ListValue(tuple(items))),
        )

    def forget_said(self, request: UUID, *, by: Decision, at: datetime) -> None:
        """Approves a request to forget what was said (ADR 0174): the lines it names, its own
        line and the words deciding it are forgotten (their keys go; the sync forgets the
        memories drawn from them), and so is any pending change quoting one of those lines.
        No field changes, so the profile gets no new version."""
        self._check_live()
        record = self.change(request)
        proposal = record.proposal
        if proposal.operation is not Operation.FORGET_SAID or not isinstance(
            proposal.value, ListValue
        ):
            raise InvalidOperationError(f"change {request}: not a request to forget what was said")
        self._check_time(at)
        lines = set(parse_line_refs(proposal.value.items))
        for evidence in (proposal.evidence, by.evidence):
            if evidence is not None:
                lines.add((evidence.session_id, evidence.message_index))
        withdrawn = [
            str(c.change_id)
            for c in self.changes.values()
            if c.status is ChangeStatus.PENDING and c.change_id != request and _quotes(c, lines)
        ]
        self._lines_forgotten(
            at,
            by,
            f"forget request {request} approved",
            sorted(lines),
            withdrawn,
            request=request,
        )

    def rotate_key(
        self,
        *,
        retired_prefix: str,
        resealed: Sequence[JsonObject],
        at: datetime,
        command_id: str | None = None,
    ) -> None:
        """Records that the subject's key was retired, with what it sealed sealed again (the
        ledger computes both; the aggregate only keeps them in order)."""
        self._check_live()
        self._check_time(at)
        self.trigger_event(
            self.SubjectKeyRotated,
            timestamp=at,
            retired_prefix=retired_prefix,
            resealed=list(resealed),
            command_id=command_id,
        )

    def forget_memory(
        self,
        memory_id: str,
        *,
        by: Decision,
        reason: str,
        at: datetime,
        evidence_refs: Sequence[tuple[str, int]] = (),
        memory_text: str | None = None,
        common_words: Collection[str] = frozenset(),
    ) -> None:
        """Records that a backend memory must be forgotten (the sync worker acts on it), with
        the recorded lines it was drawn from (refs to other lines are left out: the backend
        may name a session this subject never recorded)."""
        self._check_live()
        check_reason(reason)
        check_text(memory_id, "memory_id")
        if memory_id in self.forgotten_memories:
            return
        self._check_time(at)
        said = self._lines(evidence_refs)
        forgotten = said if memory_text is None else (memory_text, *said)
        check_not_restated(reason, forgotten, common_words)
        refs = sorted(
            {
                (session_id, index)
                for session_id, index in evidence_refs
                if (session := self.sessions.get(session_id)) is not None
                and 0 <= index < len(session.messages)
            }
        )
        # A pending change quoting one of those lines would keep showing its words: it goes
        # with the memory. A request to forget a field is kept (withdrawing it would keep the
        # field), and so is a decided change (the field's own forget takes its words).
        lines = set(refs)
        withdrawn = [
            str(c.change_id)
            for c in self.changes.values()
            if c.status is ChangeStatus.PENDING
            and c.operation not in REQUESTS_TO_FORGET
            and (evidence := c.proposal.evidence) is not None
            and (evidence.session_id, evidence.message_index) in lines
        ]
        self._lines_forgotten(at, by, reason, refs, withdrawn, memory_id=memory_id)

    def _lines_forgotten(
        self,
        at: datetime,
        by: Decision,
        reason: str,
        lines: Sequence[tuple[str, int]],
        withdrawn: list[str],
        *,
        memory_id: str | None = None,
        request: UUID | None = None,
    ) -> None:
        """A forget of no field: a backend memory's, or the lines an approved request to
        forget what was said named; the profile gets no new version."""
        self.trigger_event(
            self.FactForgotten,
            timestamp=at,
            field=None,
            memory_id=memory_id,
            requested_by=by.by.to_payload(),
            reason=reason,
            profile_version=None,
            withdrawn_changes=withdrawn,
            command_id=by.command_id,
            request_id=None if request is None else str(request),
            relayed_by=None
            if request is None or by.relayed_by is None
            else by.relayed_by.to_payload(),
            key_generation=None,
            evidence_refs=[{"session_id": s, "message_index": i} for s, i in lines],
            kept=None,
            kept_standing=None,
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

    def erase(
        self,
        *,
        by: Decision,
        reason: str,
        at: datetime,
        common_words: Collection[str] = frozenset(),
    ) -> None:
        """Erases the subject: its keys go (transcripts and every field) and it takes no
        more commands; the stream keeps only its structure."""
        check_reason(reason)
        erased = (*self._words_of_field(None), *self._all_lines())
        check_not_restated(reason, erased, common_words)
        self._check_time(at)
        self.trigger_event(
            self.SubjectErased,
            timestamp=at,
            requested_by=by.by.to_payload(),
            reason=reason,
            fields=sorted({c.field for c in self.changes.values()}),
            command_id=by.command_id,
        )


def _quotes(change: ChangeRecord, lines: set[tuple[str, int]]) -> bool:
    """Whether a change (not a request to forget: withdrawing one would keep its field)
    quotes one of `lines`."""
    evidence = change.proposal.evidence
    return (
        change.operation not in REQUESTS_TO_FORGET
        and evidence is not None
        and (evidence.session_id, evidence.message_index) in lines
    )
