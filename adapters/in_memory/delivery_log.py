"""`DeliveryLog` in memory (tests, and a process that may resend after a restart)."""

from __future__ import annotations

from collections.abc import Sequence

from factledger.application.webhooks.ports import Delivery


class InMemoryDeliveryLog:
    def __init__(self) -> None:
        self._positions: dict[str, int] = {}
        self._deliveries: list[Delivery] = []

    async def position(self, endpoint: str) -> int:
        return self._positions.get(endpoint, 0)

    async def record(self, delivery: Delivery, *, advance_to: int | None) -> None:
        self._deliveries.append(delivery)
        if advance_to is not None:
            current = self._positions.get(delivery.endpoint, 0)
            self._positions[delivery.endpoint] = max(current, advance_to)

    async def deliveries(self, endpoint: str, *, limit: int) -> Sequence[Delivery]:
        mine = [d for d in reversed(self._deliveries) if d.endpoint == endpoint]
        return mine[:limit]
