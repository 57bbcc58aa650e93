"""Apply one sync item to the memory backend. Every write is idempotent, so a replay after a
crash (at-least-once delivery) leaves the backend exactly as one delivery would."""

from __future__ import annotations

import json
from collections.abc import Mapping
from uuid import UUID

import structlog

from factledger.application.errors import (
    ApplicationError,
    MemoryConflictError,
    MemoryNotFoundError,
)
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.memory.decisions import Decided, decided, stale_memories
from factledger.application.memory.extraction import ExtractionContext
from factledger.application.memory.forget_selection import (
    every_memory,
    fields_of,
    memories_to_forget,
)
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import (
    KIND_CHANGE_PROPOSED,
    KIND_PROFILE_VERSION,
    KIND_SESSION_SUMMARY,
    namespace_for,
    profile_record_id,
    proposal_record_id,
    transcript_document_id,
)
from factledger.application.memory.sameness import value_phrases
from factledger.application.memory.types import (
    Capability,
    IngestMode,
    Namespace,
    ProcessingState,
)
from factledger.application.review.forget_requests import screened, screened_summary
from factledger.application.sync.ports import LedgerEvent, ProfileVersions
from factledger.application.sync.search_text import record_search_text
from factledger.application.sync.types import FieldTrace, SyncItem, SyncKind
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    FactForgotten,
    MemoryExpirySet,
    SessionRecorded,
    SubjectErased,
)
from factledger.domain.provenance import STATES_VALUE
from factledger.domain.sessions import transcript_from_payload

log = structlog.get_logger(__name__)


class SyncWriteFailedError(ApplicationError):
    """The backend accepted a write but reported failure (e.g. extraction failed)."""

    def __init__(self, item_id: str, error_type: str | None) -> None:
        super().__init__(f"sync item {item_id} failed: {error_type or 'unknown'}")
        self.error_type = error_type or type(self).__name__


class UnexpectedEventError(ApplicationError):
    """An item's position no longer holds the event it was planned from."""


def body(payload: Mapping[str, object]) -> str:
    """Canonical JSON: the same event always gives byte-identical record bodies."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)


async def apply_item(
    item: SyncItem,
    event: LedgerEvent,
    backend: MemoryBackend,
    profiles: ProfileVersions,
    judge: SentenceJudge | None = None,
) -> None:
    """Performs the item's write (see `SyncKind`). With a `judge`, the subject's requests to
    forget are kept out of what the backend ingests and of the summaries it keeps: they are
    requests for a decision, never memories or notes."""
    ns = namespace_for(item.subject_id)
    match item.kind, event:
        case SyncKind.TRANSCRIPT, SessionRecorded():
            kind = await profiles.kind_of(item.subject_id)
            await _ingest(item, event, ns, backend, kind, judge)
        case SyncKind.SUMMARY, SessionRecorded():
            payload = {
                "session_id": event.session_id,
                "channel": event.channel,
                "started_at": event.started_at.isoformat(),
                "summary": await screened_summary(event.summary, judge),
            }
            await _put(backend, ns, item, KIND_SESSION_SUMMARY, payload, _session_meta(event))
        case SyncKind.PROPOSAL, ChangeProposed():
            await _put(backend, ns, item, KIND_CHANGE_PROPOSED, _proposal(event), {})
        case SyncKind.PROFILE_VERSION, ChangeConfirmed() | FactForgotten():
            profile = await profiles.profile_at(item.subject_id, event.originator_version)
            await _put(backend, ns, item, KIND_PROFILE_VERSION, profile, {})
        case SyncKind.REJECT, ChangeRejected():
            await _reject(item, event, ns, backend, profiles)
        case SyncKind.RETIRE, ChangeConfirmed():
            await _retire(item, event, ns, backend, profiles)
        case SyncKind.FORGET, FactForgotten():
            await _forget(item, event, ns, backend, profiles)
            if event.field is not None:
                trace = await profiles.field_trace(
                    item.subject_id, event.field, event.originator_version - 1
                )
                await _delete_records(item, trace, ns, backend)
            if event.withdrawn_changes:  # a field's forget also withdraws other fields' quotes
                await _delete_withdrawn(item, event, ns, backend)
            if event.field is None and event.memory_id is None and event.request_id:
                # The approved request to forget what was said goes with its lines (ADR 0174).
                record = proposal_record_id(UUID(event.request_id))
                await _delete_and_log(item, ns, backend, [record])
        case SyncKind.EXPIRE, MemoryExpirySet():
            await _expire(item, event, ns, backend)
        case SyncKind.ERASE, SubjectErased():
            # The whole namespace goes: memories, documents (transcripts), records, chunks.
            # Idempotent: dropping an empty namespace changes nothing, so a retry is safe.
            await backend.drop_namespace(ns)
            log.info("sync.namespace_dropped", item_id=item.item_id)
        case _:
            raise UnexpectedEventError(f"sync item {item.item_id}: {type(event).__name__}")


async def _put(
    backend: MemoryBackend,
    ns: Namespace,
    item: SyncItem,
    kind: str,
    payload: Mapping[str, object],
    metadata: Mapping[str, str | int],
) -> None:
    # Stored as canonical JSON, found by the words of its values.
    text = record_search_text(kind, payload)
    try:
        await backend.put_record(
            ns, item.targets[0], kind, body(payload), metadata, search_text=text
        )
    except MemoryConflictError:
        # Record ids are per event, so the record exists from an earlier delivery of this very
        # item; its body differs only if the event's payload was erased (forgotten) since.
        log.info("sync.record_exists", item_id=item.item_id, kind=kind)


def _session_meta(event: SessionRecorded) -> dict[str, str | int]:
    return {
        "session_id": event.session_id,
        "channel": event.channel,
        "interaction_number": event.interaction_number,
    }


async def _ingest(
    item: SyncItem,
    event: SessionRecorded,
    ns: Namespace,
    backend: MemoryBackend,
    kind: str,
    judge: SentenceJudge | None,
) -> None:
    if not event.transcript:
        return  # every message withheld, or the payload erased (forgotten): nothing to extract
    transcript = await screened(transcript_from_payload(event.transcript), judge)
    # The extraction context rides in the metadata, so a backend that extracts later (a queue,
    # a remote engine) still picks the session's guidance.
    context = ExtractionContext(item.tenant, kind, event.channel, event.conversation_type)
    status = await backend.ingest_transcript(
        ns,
        item.targets[0],
        transcript,
        occurred_at=event.started_at,
        metadata={**_session_meta(event), **context.to_metadata()},
        mode=IngestMode.INSTANT,
    )
    if status.state is ProcessingState.FAILED:
        raise SyncWriteFailedError(item.item_id, status.error_type)


async def _forget(
    item: SyncItem,
    event: FactForgotten,
    ns: Namespace,
    backend: MemoryBackend,
    profiles: ProfileVersions,
) -> None:
    # The reason stays in the ledger; the backend gets a fixed text that carries no content.
    reason = f"forgotten in the ledger at position {item.position}"
    # The field's memories by slot and by the words that evidenced it (`sync_forget`); the
    # profile without the field says which other fields a shared sentence must keep.
    remaining: frozenset[str] = frozenset()
    if event.memory_id is None:  # a field's, or lines' (ADR 0174)
        profile = await profiles.profile_at(item.subject_id, event.originator_version)
        remaining = fields_of(profile)
    ids = await memories_to_forget(backend, ns, event, item.subject_id, remaining)
    if ids:
        await backend.forget(ns, ids, reason=reason)
    log.info("sync.memories_forgotten", item_id=item.item_id, memories=len(ids))


async def _proposal_record(
    backend: MemoryBackend, ns: Namespace, change_id: UUID
) -> Mapping[str, object] | None:
    """A change's proposal as the sync stored it; None once it is gone (a replayed rejection,
    or its field forgotten since)."""
    try:
        record = await backend.get_record(ns, proposal_record_id(change_id))
    except MemoryNotFoundError:
        return None
    loaded = json.loads(record.body_json)
    return loaded if isinstance(loaded, dict) else None


def _payload(entry: object, key: str) -> Mapping[str, object] | None:
    value = entry.get(key) if isinstance(entry, Mapping) else None
    return value if isinstance(value, Mapping) else None


async def _held(
    profiles: ProfileVersions, subject_id: UUID, field: str, subject_version: int
) -> list[str]:
    """The wordings of the field's value in the profile as of a subject version."""
    profile = await profiles.profile_at(subject_id, subject_version)
    entry = _payload(profile, "fields")
    return value_phrases(_payload(entry.get(field) if entry else None, "value"))


async def _reject(
    item: SyncItem,
    event: ChangeRejected,
    ns: Namespace,
    backend: MemoryBackend,
    profiles: ProfileVersions,
) -> None:
    # Recall believes what was decided (`sync.decisions`): the memories of the rejected value
    # leave it, then the proposal's own record, so a retry after a crash finds the record still
    # there and selects again.
    proposal = await _proposal_record(backend, ns, event.change_id)
    if proposal is None:
        return
    field = proposal.get("field")
    if not isinstance(field, str):
        return
    if proposal.get("operation") not in {op.value for op in STATES_VALUE}:
        # A removal's or a request's items are what would have gone: declining it keeps
        # them (ADR 0159, 0160); only its record leaves.
        await _delete_proposal_record(item, event, ns, backend)
        return
    evidence = _payload(proposal, "evidence")
    session = evidence.get("session_id") if evidence else None
    line = evidence.get("message_index") if evidence else None
    decision = decided(
        field,
        value_phrases(_payload(proposal, "value")),
        await _held(profiles, item.subject_id, field, event.originator_version),
        evidence_document=(
            transcript_document_id(item.subject_id, session) if isinstance(session, str) else None
        ),
        evidence_lines=(line,) if isinstance(line, int) else (),
    )
    await _retire_memories(item, decision, ns, backend, reason="rejected")
    await _delete_proposal_record(item, event, ns, backend)


async def _delete_proposal_record(
    item: SyncItem, event: ChangeRejected, ns: Namespace, backend: MemoryBackend
) -> None:
    result = await backend.delete_records(ns, [proposal_record_id(event.change_id)])
    log.info("sync.rejected_record_deleted", item_id=item.item_id, deleted=len(result.forgotten))


async def _retire(
    item: SyncItem,
    event: ChangeConfirmed,
    ns: Namespace,
    backend: MemoryBackend,
    profiles: ProfileVersions,
) -> None:
    proposal = await _proposal_record(backend, ns, event.change_id)
    if proposal is None or proposal.get("operation") not in {"set", "unset"}:
        # Appending to a list replaces nothing; a removal's items leave recall by
        # `recall.replaced` (reversible, and only the memories of the sentences that said
        # them), not by forgetting every memory that names them.
        return
    version = event.originator_version
    kept = await _held(profiles, item.subject_id, event.field, version)
    stale = await _held(profiles, item.subject_id, event.field, version - 1)
    trace = await profiles.field_trace(item.subject_id, event.field, version)
    for change_id in trace.change_ids:
        if change_id != event.change_id:
            other = await _proposal_record(backend, ns, change_id)
            stale += value_phrases(_payload(other, "value") if other else None)
    decision = decided(event.field, stale, kept, whole_slot=proposal.get("operation") == "set")
    await _retire_memories(item, decision, ns, backend, reason="replaced by an approved change")


async def _retire_memories(
    item: SyncItem,
    decision: Decided,
    ns: Namespace,
    backend: MemoryBackend,
    *,
    reason: str,
) -> None:
    slots = Capability.FACT_SLOTS in backend.capabilities
    memories = [m async for m in every_memory(backend, ns)]
    ids = stale_memories(memories, decision, slots=slots)
    if ids:
        # The backend gets a fixed text naming the decision's position, never its content.
        await backend.forget(ns, ids, reason=f"{reason} in the ledger at position {item.position}")
    log.info("sync.decided_memories_retired", item_id=item.item_id, memories=len(ids))


async def _expire(
    item: SyncItem, event: MemoryExpirySet, ns: Namespace, backend: MemoryBackend
) -> None:
    try:
        await backend.expire(ns, event.memory_id, at=event.valid_until)
    except MemoryNotFoundError:
        # Gone from the backend (forgotten for good, or its namespace dropped): nothing to hide.
        log.info("sync.expiry_target_missing", item_id=item.item_id)


async def _delete_records(
    item: SyncItem, trace: FieldTrace, ns: Namespace, backend: MemoryBackend
) -> None:
    # Erasure, not a soft forget: every record that carried the field (its value in plain
    # text, searchable as chunks) is deleted. Idempotent: on a replay they are reported missing.
    # No redacted copies are written: the latest profile version record (written by this
    # event) holds every remaining field, and the ledger keeps their history.
    ids = [profile_record_id(v) for v in trace.profile_versions]
    ids += [proposal_record_id(c) for c in trace.change_ids]
    if not ids:
        return
    await _delete_and_log(item, ns, backend, ids)


async def _delete_withdrawn(
    item: SyncItem, event: FactForgotten, ns: Namespace, backend: MemoryBackend
) -> None:
    """The pending proposals a forget withdrew (a memory's, or any field's quoting a forgotten
    field's lines): their records go, as a forgotten field's do. Idempotent like
    `_delete_records`."""
    ids = [proposal_record_id(UUID(c)) for c in event.withdrawn_changes]
    await _delete_and_log(item, ns, backend, ids)


async def _delete_and_log(
    item: SyncItem, ns: Namespace, backend: MemoryBackend, ids: list[str]
) -> None:
    result = await backend.delete_records(ns, ids)
    log.info(
        "sync.records_deleted",
        item_id=item.item_id,
        deleted=len(result.forgotten),
        missing=len(result.missing),
    )


def _proposal(event: ChangeProposed) -> dict[str, object]:
    return {
        "change_id": str(event.change_id),
        "field": event.field,
        "operation": event.operation,
        "value": event.value,
        "condition": event.condition,
        "origin": event.origin,
        "evidence": event.evidence,
        "rationale": event.rationale,
        "proposed_by": event.proposed_by,
        "based_on_version": event.based_on_version,
        "proposed_at": event.timestamp.isoformat(),
    }
