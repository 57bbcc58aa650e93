"""One tenant's ledger events in the order of the notification log, for the event stream.

- A position is the notification id: strictly increasing, so "everything after position p" is
  a resume point that neither repeats nor skips an event. Readers get it sealed as an opaque
  cursor (`cursors`), per tenant: the log's positions would show other tenants' volume.
- Only the subject's events are read (by topic), and of those only the tenant's; the subject
  kind and event types narrow further. A page also says how far it scanned, so a filter that
  matches nothing still moves on.
- Reads block (they run on the caller's worker thread) and hold a connection only for the read.
- Reads go through the ledger's `history` (a hot standby's, when the request may read one):
  the standby's log is a prefix of the primary's, so a reader that goes on from its own
  position on either server neither repeats nor skips an event.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol

from factledger.application.errors import NotFoundError
from factledger.application.ledger.cursors import StreamCursors
from factledger.application.ledger.ledger import Ledger
from factledger.domain import events as ev

_EVENT_CLASSES: tuple[type[object], ...] = (
    ev.SubjectRegistered,
    ev.SessionRecorded,
    ev.ChangeProposed,
    ev.ChangeConfirmed,
    ev.ChangeRejected,
    ev.FactForgotten,
    ev.ChangeSuperseded,
    ev.SessionReviewed,
    ev.SubjectErased,
    ev.MemoryExpirySet,
    ev.FieldExpirySet,
)


def _short(topic: str) -> str:
    # "factledger.subject.change_proposed.v1" -> "change_proposed"
    return topic.split(".")[2]


# The public names of the event types (the SSE `event` field) and their stored topics.
TOPIC_BY_TYPE: dict[str, str] = {
    _short(str(getattr(c, "TOPIC"))): str(getattr(c, "TOPIC"))  # noqa: B009 - class attribute
    for c in _EVENT_CLASSES
}
TYPE_BY_TOPIC = {topic: name for name, topic in TOPIC_BY_TYPE.items()}


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    position: int  # the log's own: never sent (see `cursors`)
    subject_id: UUID
    kind: str
    type: str
    event: DomainEventProtocol[UUID]
    cursor: str = ""  # the position as the tenant's readers see it


@dataclass(frozen=True, slots=True)
class LogPage:
    events: list[LoggedEvent]
    scanned_to: int  # the last position read, matched or not
    more: bool  # the page was full: read again at once


@dataclass(frozen=True, slots=True)
class _Origin:
    tenant: str
    kind: str


class TenantEventLog:
    """Reads one tenant's events from the ledger's notification log (blocking)."""

    def __init__(self, ledger: Ledger, cursors: StreamCursors | None = None) -> None:
        self._ledger = ledger
        self._origins: dict[UUID, _Origin] = {}  # a subject's tenant and kind never change
        self.cursors = cursors or StreamCursors(ledger.keys)

    def head(self) -> int:
        """The last position of the whole log (0 when empty)."""
        return self._ledger.history_log.max_notification_id() or 0

    def read(
        self,
        tenant: str,
        *,
        after: int,
        limit: int,
        types: Collection[str] = (),
        kinds: Collection[str] = (),
    ) -> LogPage:
        """Up to `limit` positions after `after`; of those, the tenant's events that match."""
        topics = [TOPIC_BY_TYPE[t] for t in types] if types else list(TYPE_BY_TOPIC)
        found = self._ledger.history_log.select_notifications(
            start=after, limit=limit, topics=topics, inclusive_of_start=False
        )
        matched = [
            LoggedEvent(
                n.id,
                _uuid(n.originator_id),
                origin.kind,
                TYPE_BY_TOPIC[n.topic],
                self._ledger.mapper.to_domain_event(n),
                self.cursors.cursor(tenant, n.id),
            )
            for n in found
            if (origin := self._origin(_uuid(n.originator_id))).tenant == tenant
            and (not kinds or origin.kind in kinds)
        ]
        return LogPage(matched, found[-1].id if found else after, more=len(found) == limit)

    def forgotten_fields(self, subject_ids: Iterable[UUID]) -> dict[UUID, set[str]]:
        """Each subject's forgotten fields, as of now: their values are redacted on the way
        out, whenever the event that held them was recorded."""
        return {
            subject_id: {
                e.field
                for e in self._ledger.history.get(subject_id)
                if isinstance(e, ev.FactForgotten) and e.field is not None
            }
            for subject_id in set(subject_ids)
        }

    def _origin(self, subject_id: UUID) -> _Origin:
        origin = self._origins.get(subject_id)
        if origin is None:
            # The first event alone: a subject never changes tenant or kind.
            first = next(iter(self._ledger.history.get(subject_id, lte=1)), None)
            if not isinstance(first, ev.SubjectRegistered):
                raise NotFoundError(f"subject {subject_id}")
            origin = _Origin(first.tenant, first.kind)
            self._origins[subject_id] = origin
        return origin


def _uuid(originator_id: UUID | str) -> UUID:
    return originator_id if isinstance(originator_id, UUID) else UUID(originator_id)
