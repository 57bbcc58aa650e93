"""Prometheus metrics of one API instance, in its own registry (tests build many apps).

- Request latency histograms are labelled by route *template* (`/v1/subjects/{subject}/recall`),
  never by the concrete path, so ids do not explode the label space or leak into dashboards.
- Recall degradations are counted by their fixed reason code (timeout, backend_error, ...).
- Sync lag (events not yet delivered to the memory backend) is read at scrape time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
UNMATCHED_ROUTE = "unmatched"

SyncLagProbe = Callable[[], Awaitable[int | None]]


class ApiMetrics:
    """The metrics one app exposes on `/metrics`."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self, *, sync_lag: SyncLagProbe | None = None) -> None:
        self.registry = CollectorRegistry()
        self.request_seconds = Histogram(
            "factledger_http_request_duration_seconds",
            "HTTP request latency by route template.",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.recall_degraded = Counter(
            "factledger_recall_degraded",
            "Recalls and session contexts returned degraded, by reason.",
            ["operation", "reason"],
            registry=self.registry,
        )
        self.sync_lag = Gauge(
            "factledger_sync_lag_events",
            "Ledger events not yet delivered to the memory backend (-1 when unknown).",
            registry=self.registry,
        )
        self.dead_letters = Gauge(
            "factledger_sync_dead_letters",
            "Items the sync gave up on, waiting for a retry (-1 when unknown).",
            registry=self.registry,
        )
        self._sync_lag_probe = sync_lag

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.request_seconds.labels(method, route, str(status)).observe(seconds)

    def count_degraded(self, operation: str, reason: str) -> None:
        self.recall_degraded.labels(operation, reason).inc()

    def set_sync_lag_probe(self, probe: SyncLagProbe | None) -> None:
        self._sync_lag_probe = probe

    async def render(self, *, dead_letters: int | None = None) -> bytes:
        """The exposition text, after refreshing the values read at scrape time."""
        lag = None if self._sync_lag_probe is None else await self._sync_lag_probe()
        self.sync_lag.set(-1 if lag is None else lag)
        self.dead_letters.set(-1 if dead_letters is None else dead_letters)
        return generate_latest(self.registry)
