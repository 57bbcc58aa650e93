"""The sync's view of the ledger: its notification log in order, and profiles by version."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast
from uuid import UUID

from eventsourcing.domain import CanMutateProtocol
from eventsourcing.persistence import Notification

from factledger.application.errors import NotFoundError
from factledger.application.ledger.cipher import ShreddingMapper
from factledger.application.ledger.ledger import Ledger
from factledger.application.sync.plan import SYNCED_TOPICS
from factledger.application.sync.ports import LedgerEvent
from factledger.application.sync.types import FieldTrace
from factledger.domain.events import ChangeConfirmed, FactForgotten
from factledger.domain.provenance import Operation
from factledger.domain.subject import Subject
from factledger.domain.values import render, to_payload


class LedgerEventFeed:
    """Reads the `Ledger`'s notification log (blocking calls run in a worker thread)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._tenants: dict[UUID, str] = {}  # a subject's tenant never changes
        self._kinds: dict[UUID, str] = {}  # nor does its kind

    async def head(self) -> int:
        """The position of the newest event in the log, synced or not (0 when empty)."""
        return await asyncio.to_thread(
            lambda: int(self._ledger.recorder.max_notification_id() or 0)
        )

    async def read(
        self, *, after: int, limit: int, upto: int | None = None
    ) -> list[tuple[int, LedgerEvent]]:
        """Synced events after `after` (and up to `upto`, inclusive, when given), oldest first."""

        def select() -> list[tuple[int, LedgerEvent]]:
            notifications = self._ledger.recorder.select_notifications(
                start=after,
                limit=limit,
                stop=upto,
                topics=SYNCED_TOPICS,
                inclusive_of_start=False,
            )
            # Planning reads no message's words (only whether a session has any), so its lines
            # stay sealed and their keys unread; a page's other keys are read in one call.
            events = self._decoded(notifications, transcript_text=False)
            return [(n.id, event) for n, event in zip(notifications, events, strict=True)]

        return await asyncio.to_thread(select)

    async def get(self, position: int) -> LedgerEvent:
        """The event at one position."""

        def select() -> LedgerEvent:
            found = self._ledger.recorder.select_notifications(start=position, limit=1)
            if not found or found[0].id != position:
                raise NotFoundError(f"event at position {position}")
            # One key-store read for all the event's keys (a session's lines each have one).
            return self._decoded(found, transcript_text=True)[0]

        return await asyncio.to_thread(select)

    def _decoded(
        self, notifications: Sequence[Notification], *, transcript_text: bool
    ) -> list[LedgerEvent]:
        mapper = self._ledger.mapper
        if isinstance(mapper, ShreddingMapper):  # the ledger's: reads the events' keys at once
            return mapper.to_domain_events(notifications, transcript_text=transcript_text)
        return [mapper.to_domain_event(n) for n in notifications]

    async def profile_at(self, subject_id: UUID, subject_version: int) -> Mapping[str, object]:
        """The confirmed profile right after the subject's event `subject_version`."""

        def load() -> Mapping[str, object]:
            subject = cast(
                "Subject", self._ledger.repository.get(subject_id, version=subject_version)
            )
            return {
                "profile_version": subject.profile_version,
                "fields": {
                    name: {
                        "value": to_payload(f.value),
                        "text": render(f.value),
                        "condition": f.condition,
                        "origin": f.origin.value,
                        "since_version": f.since_version,
                        "confirmed_at": f.confirmed_at.isoformat(),
                        "evidence_session": f.evidence_session,
                    }
                    for name, f in sorted(subject.fields.items())
                },
            }

        return await asyncio.to_thread(load)

    async def field_trace(self, subject_id: UUID, field: str, subject_version: int) -> FieldTrace:
        """The profile versions that held `field` and the changes proposed for it, in the
        subject's stream up to `subject_version`.

        Presence follows the events' structure (confirmed and not unset, not yet forgotten),
        never the values: once the field's key is gone its values read back as erased.
        """

        def load() -> FieldTrace:
            events = self._ledger.repository.event_store.get(subject_id, lte=subject_version)
            subject: Subject | None = None
            present = False
            versions: list[int] = []
            for event in events:
                subject = cast("CanMutateProtocol[Any]", event).mutate(subject)
                if subject is None:
                    break
                if isinstance(event, ChangeConfirmed) and event.field == field:
                    operation = subject.changes[event.change_id].proposal.operation
                    present = operation is not Operation.UNSET
                elif isinstance(event, FactForgotten) and event.field == field:
                    present = False
                version = getattr(event, "profile_version", None)
                if present and isinstance(version, int):
                    versions.append(version)
            changes = [] if subject is None else list(subject.changes.values())
            return FieldTrace(
                profile_versions=tuple(versions),
                change_ids=tuple(c.change_id for c in changes if c.field == field),
            )

        return await asyncio.to_thread(load)

    async def kind_of(self, subject_id: UUID) -> str:
        """The subject's kind, from its registration (the stream's first event)."""
        if subject_id not in self._kinds:

            def load() -> str:
                return cast("Subject", self._ledger.repository.get(subject_id, version=1)).kind

            self._kinds[subject_id] = await asyncio.to_thread(load)
        return self._kinds[subject_id]

    async def tenant_of(self, subject_id: UUID) -> str:
        """The subject's tenant, from its registration (the stream's first event)."""
        return (await self.tenants_of([subject_id]))[subject_id]

    async def tenants_of(self, subject_ids: Iterable[UUID]) -> dict[UUID, str]:
        """The tenants of several subjects; the ones not seen yet are read in one thread."""
        wanted = set(subject_ids)
        missing = wanted - self._tenants.keys()
        if missing:

            def load() -> dict[UUID, str]:
                return {
                    subject_id: cast(
                        "Subject", self._ledger.repository.get(subject_id, version=1)
                    ).tenant
                    for subject_id in missing
                }

            self._tenants.update(await asyncio.to_thread(load))
        return {subject_id: self._tenants[subject_id] for subject_id in wanted}
