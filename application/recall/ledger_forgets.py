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
from typing import cast
from uuid import UUID

from cachetools import LRUCache
from eventsourcing.application import AggregateNotFoundError

from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.forgets import NOTHING_FORGOTTEN, FieldForget, ForgetMask
from factledger.application.sync.ids import transcript_document_id
from factledger.domain.forgets import ForgetMark
from factledger.domain.subject import Subject

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
        if not (subject.erased or subject.forgotten_memories or subject.forget_marks):
            return NOTHING_FORGOTTEN
        with self._lock:
            known = self._masks.get(subject_id)
            if known is not None and known[0] == subject.version:
                return known[1]
        mask = mask_of(subject)
        with self._lock:
            self._masks[subject_id] = (subject.version, mask)
        return mask


def mask_of(subject: Subject) -> ForgetMask:
    """The subject's forgets as recall applies them (see `recall.forgets`)."""
    return ForgetMask(
        erased=subject.erased,
        memory_ids=frozenset(subject.forgotten_memories),
        fields=tuple(_field(subject, name, mark) for name, mark in subject.forget_marks.items()),
        current_fields=frozenset(subject.fields),
    )


def _field(subject: Subject, name: str, mark: ForgetMark) -> FieldForget:
    evidence: dict[str, set[int]] = {}
    for session_id, index in mark.evidence:
        evidence.setdefault(transcript_document_id(subject.id, session_id), set()).add(index)
    before = frozenset(
        transcript_document_id(subject.id, session_id)
        for session_id, info in subject.sessions.items()
        if info.recorded_version < mark.version
    )
    return FieldForget(name, {d: frozenset(i) for d, i in evidence.items()}, before)
