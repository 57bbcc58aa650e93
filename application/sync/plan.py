"""Which backend writes each ledger event needs (pure: no I/O)."""

from __future__ import annotations

from uuid import UUID

from factledger.application.memory.record_ids import (
    namespace_for,
    profile_record_id,
    proposal_record_id,
    summary_record_id,
    transcript_document_id,
)
from factledger.application.sync.ports import LedgerEvent
from factledger.application.sync.types import SyncItem, SyncKind
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    FactForgotten,
    MemoryExpirySet,
    SessionRecorded,
    SubjectErased,
)

# Only these events reach the backend; the feed asks the event store for them alone.
SYNCED_TOPICS: tuple[str, ...] = (
    SessionRecorded.TOPIC,
    ChangeProposed.TOPIC,
    ChangeConfirmed.TOPIC,
    ChangeRejected.TOPIC,
    FactForgotten.TOPIC,
    SubjectErased.TOPIC,
    MemoryExpirySet.TOPIC,
)


def plan(
    position: int, event: LedgerEvent, tenant: str, *, propose: bool = False
) -> list[SyncItem]:
    """The items of one event of a subject of `tenant`, in the order they must be applied;
    with `propose`, a recorded session also gets the model's review (after its ingest)."""
    subject = event.originator_id
    if not isinstance(subject, UUID):
        return []

    def item(n: int, kind: SyncKind, *targets: str) -> SyncItem:
        return SyncItem(f"{position}.{n}", position, subject, kind, targets, tenant=tenant)

    match event:
        case SessionRecorded():
            items = [
                item(
                    0,
                    SyncKind.TRANSCRIPT,
                    transcript_document_id(subject, event.session_id),
                )
            ]
            if event.summary:
                record = summary_record_id(subject, event.session_id)
                items.append(item(1, SyncKind.SUMMARY, record))
            if propose and event.transcript:
                items.append(item(2, SyncKind.PROPOSE, f"session:{event.session_id}"))
            return items
        case ChangeProposed():
            record = proposal_record_id(event.change_id)
            return [item(0, SyncKind.PROPOSAL, record)]
        case ChangeConfirmed():
            record = profile_record_id(event.profile_version)
            return [
                item(0, SyncKind.PROFILE_VERSION, record),
                item(1, SyncKind.RETIRE, f"field:{event.field}"),
            ]
        case ChangeRejected():
            return [item(0, SyncKind.REJECT, proposal_record_id(event.change_id))]
        case FactForgotten():
            items = []
            if event.profile_version is not None:
                record = profile_record_id(event.profile_version)
                items.append(item(0, SyncKind.PROFILE_VERSION, record))
            target = (
                f"field:{event.field}"
                if event.field
                else f"memory:{event.memory_id}"
                if event.memory_id
                else f"said:{event.request_id}"  # lines a request named (ADR 0174)
            )
            items.append(item(1, SyncKind.FORGET, target))
            return items
        case MemoryExpirySet():
            return [item(0, SyncKind.EXPIRE, f"memory:{event.memory_id}")]
        case SubjectErased():
            return [item(0, SyncKind.ERASE, f"namespace:{namespace_for(subject)}")]
    return []
