"""Figures of one load level: throughput, per-route percentiles, late recalls, degraded share,
errors and memory; and the markdown tables `docs/benchmarks.md` shows."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from factledger.bench.load.agent import Sample

LATE_RECALL_S = 1.05  # the 1 s promise plus what a loopback round trip may add
ROUTES = ("context", "recall", "append", "start", "end", "profile")


def percentile(sorted_values: list[float], share: float) -> float:
    """Nearest-rank percentile of an ascending list (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, round(share * len(sorted_values) + 0.5 - 1e-9))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass(frozen=True, slots=True)
class RouteFigures:
    route: str
    count: int
    p50_ms: float
    p95_ms: float
    p99_ms: float


@dataclass(frozen=True, slots=True)
class LevelFigures:
    """One topology at one number of clients."""

    topology: str
    clients: int
    seconds: float
    requests: int
    routes: tuple[RouteFigures, ...]
    late_recalls: int
    late_in_app: int  # recalls whose time inside the server's app passed 1.05 s
    recall_in_app_p99_ms: float
    recalls: int
    degraded: dict[str, int]
    server_errors: int
    transport_errors: dict[str, int]
    other_errors: dict[int, int]
    other_by_route: dict[str, int]
    client_lag_p99_ms: float
    retried: int  # answers that needed one or more retries after a 503 with Retry-After
    rss_mib: float
    load_average: str

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def degraded_share(self) -> float:
        answered = sum(r.count for r in self.routes if r.route in {"recall", "context"})
        return sum(self.degraded.values()) / answered if answered else 0.0

    def rate(self, *routes: str) -> float:
        count = sum(r.count for r in self.routes if r.route in routes)
        return count / self.seconds if self.seconds else 0.0


def figures(
    topology: str,
    clients: int,
    seconds: float,
    samples: list[Sample],
    *,
    lags: list[float],
    rss_mib: float,
    load_average: str,
) -> LevelFigures:
    routes = []
    for route in ROUTES:
        times = sorted(s.seconds for s in samples if s.route == route)
        routes.append(
            RouteFigures(
                route,
                len(times),
                percentile(times, 0.50) * 1e3,
                percentile(times, 0.95) * 1e3,
                percentile(times, 0.99) * 1e3,
            )
        )
    recalls = [s for s in samples if s.route == "recall"]
    in_app = sorted(s.in_app_s for s in recalls if s.in_app_s is not None)
    statuses = Counter(s.status for s in samples if not 200 <= s.status < 300)
    return LevelFigures(
        topology=topology,
        clients=clients,
        seconds=seconds,
        requests=len(samples),
        routes=tuple(routes),
        late_recalls=sum(1 for s in recalls if s.seconds > LATE_RECALL_S),
        late_in_app=sum(1 for t in in_app if t > LATE_RECALL_S),
        recall_in_app_p99_ms=percentile(in_app, 0.99) * 1e3,
        recalls=len(recalls),
        degraded=dict(Counter(s.degraded for s in samples if s.degraded is not None)),
        server_errors=sum(n for status, n in statuses.items() if status >= 500),
        # Per route, so a 404 or 422 points at its cause.
        other_by_route=dict(
            Counter(f"{s.route} {s.status}" for s in samples if 400 <= s.status < 500)
        ),
        transport_errors=dict(Counter(s.error for s in samples if s.error is not None)),
        other_errors={status: n for status, n in statuses.items() if 0 < status < 500},
        client_lag_p99_ms=percentile(sorted(lags), 0.99) * 1e3,
        retried=sum(1 for s in samples if s.retries),
        rss_mib=rss_mib,
        load_average=load_average,
    )


def summary_table(levels: list[LevelFigures]) -> str:
    lines = [
        "| topology | clients | requests | req/s | recalls/s | writes/s "
        "| recalls > 1.05 s at the client | in the app | recall p99 in the app ms "
        "| degraded share (reasons) | 5xx | transport errors | 4xx | answers after a 503 retry "
        "| client loop lag p99 ms | server RSS MiB | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in levels:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(f.degraded.items())) or "-"
        four = ", ".join(f"{k}: {v}" for k, v in sorted(f.other_by_route.items())) or "0"
        lost = ", ".join(f"{k} {v}" for k, v in sorted(f.transport_errors.items())) or "0"
        lines.append(
            f"| {f.topology} | {f.clients} | {f.requests} | {f.throughput:.1f} "
            f"| {f.rate('recall', 'context'):.1f} | {f.rate('append', 'start', 'end'):.1f} "
            f"| {f.late_recalls} of {f.recalls} | {f.late_in_app} "
            f"| {f.recall_in_app_p99_ms:.0f} | {f.degraded_share:.1%} ({reasons}) "
            f"| {f.server_errors} | {lost} | {four} | {f.retried} "
            f"| {f.client_lag_p99_ms:.0f} "
            f"| {f.rss_mib:.0f} | {f.load_average} |"
        )
    return "\n".join(lines)


def latency_table(levels: list[LevelFigures]) -> str:
    header = " | ".join(f"{route} p50/p95/p99" for route in ROUTES)
    lines = [
        f"| topology | clients | {header} |",
        "|---|---|" + "---|" * len(ROUTES),
    ]
    for f in levels:
        cells = " | ".join(f"{r.p50_ms:.0f} / {r.p95_ms:.0f} / {r.p99_ms:.0f}" for r in f.routes)
        lines.append(f"| {f.topology} | {f.clients} | {cells} |")
    return "\n".join(lines)
