"""`KeyedEventStore`: the library's event store, reading a stream's keys in one call, and
sealing a save's events with one read of their current keys.

The library decodes a stream's events one by one, and the ledger's mapper then asks the key
store for each key it has not cached: a subject's sessions seal every line under a key of its
own, so loading a subject a process has not met cost a key-store round trip per line. Here the
stream's stored events are read first and decoded together (`ShreddingMapper.to_domain_events`:
one key-store call for the keys not cached). The events are the same.

A save seals its events with the current keys of their scopes (a review's proposals each have
a scope of its own, and a scope's first use inserts its key): read for all of them at once
(`ShreddingMapper.to_stored_events`), not for each event in turn.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import EventStore, Notification, Recording

from factledger.application.ledger.cipher import ShreddingMapper


class KeyedEventStore(EventStore[UUID]):
    """An `EventStore` whose `get` reads the keys of the events it returns at once, and whose
    `put` reads the current keys of the events it stores at once."""

    def get(
        self,
        originator_id: UUID,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Iterator[DomainEventProtocol[UUID]]:
        mapper = self.mapper
        if not isinstance(mapper, ShreddingMapper):
            return super().get(originator_id, gt=gt, lte=lte, desc=desc, limit=limit)
        stored = self.recorder.select_events(
            originator_id=originator_id, gt=gt, lte=lte, desc=desc, limit=limit
        )
        return iter(mapper.to_domain_events(list(stored)))

    def put(
        self, domain_events: Sequence[DomainEventProtocol[UUID]], **kwargs: Any
    ) -> list[Recording[UUID]]:
        mapper = self.mapper
        if not isinstance(mapper, ShreddingMapper):
            return super().put(domain_events, **kwargs)
        # The library's `put`, with the events sealed together (one key-store call).
        stored = mapper.to_stored_events(domain_events)
        ids = self.recorder.insert_events(stored, **kwargs)
        if not ids:
            return []
        return [
            Recording(
                event, Notification(s.originator_id, s.originator_version, s.topic, s.state, n)
            )
            for event, s, n in zip(domain_events, stored, ids, strict=True)
        ]
