"""`KeyedEventStore`: the library's event store, reading a stream's keys in one call.

The library decodes a stream's events one by one, and the ledger's mapper then asks the key
store for each key it has not cached: a subject's sessions seal every line under a key of its
own, so loading a subject a process has not met cost a key-store round trip per line. Here the
stream's stored events are read first and decoded together (`ShreddingMapper.to_domain_events`:
one key-store call for the keys not cached). The events are the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import EventStore

from factledger.application.ledger.cipher import ShreddingMapper


class KeyedEventStore(EventStore[UUID]):
    """An `EventStore` whose `get` reads the keys of the events it returns at once."""

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
