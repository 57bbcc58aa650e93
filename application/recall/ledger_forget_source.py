"""`ForgetSource` over the ledger: the subject aggregate's forgets, read on every recall.

The aggregate comes from the library's cache (fast-forwarded to the latest version), so the
read costs a cache hit plus, on a database event store, one query for newer events. The mask
is kept per subject and version: a subject with no new events reuses the last one, and the
common subject that never forgot anything gets the shared empty mask without hashing. The
masks kept are cachetools' `LRUCache`, behind a lock since recalls read in threads.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import cast
from uuid import UUID

from cachetools import LRUCache
from eventsourcing.application import AggregateNotFoundError

from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.decisions import decided
from factledger.application.memory.record_ids import transcript_document_id
from factledger.application.memory.sameness import value_phrases
from factledger.application.recall.forget_filter import (
    NOTHING_FORGOTTEN,
    FieldForget,
    ForgetMask,
    Rejection,
)
from factledger.application.recall.replaced import may_replace, replaced_statements
from factledger.application.recall.requested import requested_changes, spoken_requests
from factledger.domain.events import ChangeRejected
from factledger.domain.forget_mark import ForgetMark
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import STATES_VALUE, ChangeStatus
from factledger.domain.subject import Subject
from factledger.domain.values import to_payload

MASKS_KEPT = 10_000  # subjects whose mask is kept: ids and a few sets each


class LedgerForgets:
    """The forgets of a subject as of the ledger's latest version; unknown subjects have none."""

    def __init__(self, ledger: Ledger, *, kept: int = MASKS_KEPT) -> None:
        self._ledger = ledger
        self._masks: LRUCache[UUID, tuple[int, ForgetMask]] = LRUCache(kept)
        self._lock = threading.Lock()  # recalls read in worker threads concurrently

    async def mask(self, subject_id: UUID) -> ForgetMask:
        return await asyncio.to_thread(self.mask_now, subject_id)

    def mask_now(self, subject_id: UUID) -> ForgetMask:
        """`mask`, blocking (the benchmark times this part alone)."""
        try:
            subject = cast("Subject", self._ledger.repository.get(subject_id))
        except AggregateNotFoundError:
            return NOTHING_FORGOTTEN
        return self.mask_of_read(subject)

    def mask_of_read(self, subject: Subject) -> ForgetMask:
        """The mask of a subject already read from the ledger (kept per version)."""
        subject_id = subject.id
        rejected = any(c.status is ChangeStatus.REJECTED for c in subject.changes.values())
        forgets = subject.erased or subject.forgotten_memories or subject.forget_marks
        if not (forgets or rejected or may_replace(subject)):
            return NOTHING_FORGOTTEN
        with self._lock:
            known = self._masks.get(subject_id)
            if known is not None and known[0] == subject.version:
                return known[1]
        mask = mask_of(subject, self._rejected_at(subject) if rejected else {})
        with self._lock:
            self._masks[subject_id] = (subject.version, mask)
        return mask

    def _rejected_at(self, subject: Subject) -> dict[UUID, int]:
        """The version of each rejection: the aggregate keeps a change's status, not when it
        was decided, so its stream says (read only when the subject has a rejection and a new
        version)."""
        events = self._ledger.repository.event_store.get(subject.id)
        return {e.change_id: e.originator_version for e in events if isinstance(e, ChangeRejected)}


def mask_of(subject: Subject, rejected_at: Mapping[UUID, int] | None = None) -> ForgetMask:
    """The subject's forgets as recall applies them (see `recall.forget_filter`), and its rejected
    proposals (`rejected_at`: each rejection's version) as the sync's `reject` items apply
    them, with the profile as it stands for the values that are kept."""
    requested = spoken_requests(subject)
    return ForgetMask(
        erased=subject.erased,
        memory_ids=frozenset(subject.forgotten_memories),
        fields=tuple(_field(subject, name, mark) for name, mark in subject.forget_marks.items()),
        current_fields=frozenset(subject.fields),
        rejections=tuple(
            _rejection(subject, subject.changes[change_id], version)
            for change_id, version in sorted((rejected_at or {}).items(), key=lambda kv: kv[1])
            if change_id in subject.changes and subject.changes[change_id].operation in STATES_VALUE
        ),
        replaced=replaced_statements(subject),
        requested=requested,
        withheld_changes=requested_changes(subject, requested),
    )


def _before(subject: Subject, version: int) -> frozenset[str]:
    return frozenset(
        transcript_document_id(subject.id, session_id)
        for session_id, info in subject.sessions.items()
        if info.recorded_version < version
    )


def _rejection(subject: Subject, change: ChangeRecord, version: int) -> Rejection:
    proposal = change.proposal
    held = subject.fields.get(change.field)
    evidence = proposal.evidence
    decision = decided(
        change.field,
        [] if proposal.value is None else value_phrases(to_payload(proposal.value)),
        [] if held is None else value_phrases(to_payload(held.value)),
        evidence_document=(
            None if evidence is None else transcript_document_id(subject.id, evidence.session_id)
        ),
        evidence_lines=() if evidence is None else (evidence.message_index,),
    )
    return Rejection(decision, _before(subject, version))


def _field(subject: Subject, name: str, mark: ForgetMark) -> FieldForget:
    evidence: dict[str, set[int]] = {}
    for session_id, index in mark.evidence:
        evidence.setdefault(transcript_document_id(subject.id, session_id), set()).add(index)
    before = _before(subject, mark.version)
    return FieldForget(name, {d: frozenset(i) for d, i in evidence.items()}, before)
