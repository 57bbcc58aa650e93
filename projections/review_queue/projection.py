"""`ReviewQueueProjection`: subject events -> the review queue's rows (`application.review`).

It keeps, besides one row per pending proposal, what its filters need from other events: the
subject's tenant, kind and reference (registration) and each conversation's type and time
(session), so a row carries them and every filter is a column. A decision, a supersession, a
forget's withdrawal or an erasure takes the rows out. Its store is its own (rows and position
commit together): dropped and replayed from position 0, it is rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from eventsourcing.application import Application

from factledger.application.review_queue.ports import (
    ItemRow,
    QueueStore,
    QueueWrites,
    SessionRow,
    SubjectRow,
    time_key,
)
from factledger.application.review_queue.queue import group_key
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    ChangeSuperseded,
    FactForgotten,
    SessionRecorded,
    SubjectErased,
    SubjectRegistered,
)
from factledger.domain.provenance import ActorKind
from factledger.domain.values import JsonValue
from factledger.projections.follower import PAGE, Follower, Tracked
from factledger.projections.gc_easing import garbage_collection_eased
from factledger.projections.profile.shapes import change_doc


def _proposer(payload: JsonValue) -> str:
    if not isinstance(payload, dict):
        return f"{ActorKind.SYSTEM.value}:unknown"
    return f"{payload.get('kind')}:{payload.get('id')}"


class ReviewQueueProjection:
    """A `Processor` (see `projections.follower`) keeping the review queue's rows."""

    # The views keep a session's counts and times, never its words (see `Processor`).
    reads_transcript_text = False

    def __init__(self, store: QueueStore) -> None:
        self.store = store
        self.name = store.name

    def position(self) -> int:
        return self.store.position()

    def rebuild(self, app: Application[UUID], *, page: int = PAGE) -> int:
        """Empties the store and replays the whole log into it; returns events replayed."""
        self.store.drop()
        with garbage_collection_eased():
            return Follower(app, [self], page=page).catch_up()

    def process(self, batch: Sequence[Tracked]) -> None:
        with self.store.transaction() as txn:
            for item in batch:
                if item.position > txn.position():
                    self._apply(txn, item)
            txn.advance(max(txn.position(), batch[-1].position))

    def _apply(self, txn: QueueWrites, item: Tracked) -> None:
        event, sid = item.event, str(item.event.originator_id)
        match event:
            case SubjectRegistered() if event.external_ref is not None:
                txn.put_subject(SubjectRow(sid, event.tenant, event.kind, event.external_ref))
            case SubjectRegistered():
                pass  # erased: without a subject row none of its proposals enter the queue
            case SessionRecorded():
                txn.put_session(
                    SessionRow(
                        sid,
                        event.session_id,
                        event.conversation_type,
                        event.started_at.isoformat(),
                    )
                )
            case ChangeProposed():
                self._proposed(txn, event, item.position)
            case ChangeConfirmed() | ChangeRejected():
                txn.remove(sid, str(event.change_id))
            case ChangeSuperseded():
                self._superseded(txn, sid, event)
            case FactForgotten():
                approved = [] if event.request_id is None else [event.request_id]
                for change_id in [*event.withdrawn_changes, *approved]:
                    txn.remove(sid, change_id)
            case SubjectErased():
                txn.erase(sid)

    def _proposed(self, txn: QueueWrites, e: ChangeProposed, position: int) -> None:
        sid = str(e.originator_id)
        subject = txn.subject(sid)
        if subject is None:  # a subject's first event registers it: never absent in a log
            return
        at = e.timestamp.isoformat()
        doc = change_doc(e, sid, subject.tenant, at)
        evidence = e.evidence if isinstance(e.evidence, dict) else None
        session_id = None if evidence is None else evidence.get("session_id")
        session = None if session_id is None else txn.session(sid, str(session_id))
        txn.add(
            ItemRow(
                tenant=subject.tenant,
                position=position,
                subject_id=sid,
                change_id=str(e.change_id),
                field=e.field,
                origin=e.origin,
                proposer=_proposer(e.proposed_by),
                proposed_key=time_key(e.timestamp),
                kind=subject.kind,
                external_ref=subject.external_ref,
                group_key=group_key(e.field, e.operation, e.value, e.condition, e.origin),
                session_id=None if session_id is None else str(session_id),
                said_at=None if session is None else session.said_at,
                conversation_type=None if session is None else session.conversation_type,
                doc=doc,
            )
        )

    def _superseded(self, txn: QueueWrites, sid: str, e: ChangeSuperseded) -> None:
        """The older change leaves the queue; the newer one names it."""
        txn.remove(sid, str(e.change_id))
        newer = txn.doc(sid, str(e.superseded_by))
        if newer is not None:
            before = newer.get("supersedes")
            named = [str(c) for c in before] if isinstance(before, list) else []
            txn.put_doc(
                sid, str(e.superseded_by), {**newer, "supersedes": [*named, str(e.change_id)]}
            )
