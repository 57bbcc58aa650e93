"""Prometheus metrics of one API instance, in its own registry (tests build many apps).

- Request latency histograms are labelled by route *template* (`/v1/subjects/{subject}/recall`),
  never by the concrete path, so ids do not explode the label space or leak into dashboards.
- Recall degradations are counted by their fixed reason code (timeout, backend_error, ...).
- Models that load after ready and whose last load failed are counted by model, read at
  scrape time (they are tried again after a pause, ADR 0182).
- Sync lag (events not yet delivered to the memory backend) and each projection's lag (log
  positions its views are behind the head) are read at scrape time.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from factledger.application.memory.compaction import CompactionStatus

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
UNMATCHED_ROUTE = "unmatched"


class ApiMetrics:
    """The metrics one app exposes on `/metrics`."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._models_seen: set[str] = set()
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
        self.projection_lag = Gauge(
            "factledger_projection_lag_events",
            "Log positions between the head of the ledger and a projection's views.",
            ["projection"],
            registry=self.registry,
        )
        self.compaction_last = Gauge(
            "factledger_erasure_compaction_last_timestamp_seconds",
            "When the backend's erased-from tables were last rewritten (-1: never or unknown).",
            registry=self.registry,
        )
        self.compaction_backlog = Gauge(
            "factledger_erasure_compaction_backlog_seconds",
            "How long the oldest erasure not yet compacted has left bytes in the backend's "
            "pages (0: none waiting; -1: unknown).",
            registry=self.registry,
        )
        self.dead_letters = Gauge(
            "factledger_sync_dead_letters",
            "Items the sync gave up on, waiting for a retry (-1 when unknown).",
            registry=self.registry,
        )

        self.models_failing = Gauge(
            "factledger_models_failing",
            "Models whose last load failed, by model (tried again after a pause; 0 once loaded).",
            ["model"],
            registry=self.registry,
        )

        self.read_routes = Counter(
            "factledger_read_routes",
            "Reads the API let a standby serve (standby) or kept on the primary because the "
            "standby had not replayed the caller's position in time or did not answer (primary).",
            ["route"],
            registry=self.registry,
        )

    def count_read_route(self, *, standby: bool) -> None:
        self.read_routes.labels("standby" if standby else "primary").inc()

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.request_seconds.labels(method, route, str(status)).observe(seconds)

    def count_degraded(self, operation: str, reason: str) -> None:
        self.recall_degraded.labels(operation, reason).inc()

    def render(
        self,
        *,
        sync_lag: int | None = None,
        dead_letters: int | None = None,
        projection_lag: dict[str, int] | None = None,
        compaction: CompactionStatus | None = None,
        now: datetime | None = None,
        models_failing: Mapping[str, int] | None = None,
    ) -> bytes:
        """The exposition text, with the values read at scrape time (None: unknown)."""
        failing = models_failing or {}
        for model in self._models_seen | set(failing):
            self.models_failing.labels(model).set(failing.get(model, 0))
        self._models_seen |= set(failing)
        self.sync_lag.set(-1 if sync_lag is None else sync_lag)
        for name, lag in (projection_lag or {}).items():
            self.projection_lag.labels(name).set(lag)
        self.dead_letters.set(-1 if dead_letters is None else dead_letters)
        last = None if compaction is None else compaction.last_compacted_at
        self.compaction_last.set(-1 if last is None else last.timestamp())
        if compaction is None or now is None:
            self.compaction_backlog.set(-1)
        else:
            oldest = compaction.oldest_pending_at
            self.compaction_backlog.set(0 if oldest is None else (now - oldest).total_seconds())
        return generate_latest(self.registry)
