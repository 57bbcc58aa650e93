"""The load bench's figures: nearest-rank percentiles, late recalls, degraded share, errors."""

from __future__ import annotations

from factledger.bench.load.agent import Sample
from factledger.bench.load.stats import figures, percentile, summary_table


def test_percentiles_are_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.95), percentile(values, 0.99)) == (
        50.0,
        95.0,
        99.0,
    )
    assert percentile([], 0.99) == 0.0
    assert percentile([7.0], 0.99) == 7.0


def test_a_level_counts_late_recalls_degraded_answers_and_errors_by_kind() -> None:
    samples = [
        Sample("recall", 200, 0.2, None, 0.1),
        Sample("recall", 200, 1.2, "timeout", 0.95),
        Sample("context", 200, 0.1, "overloaded"),
        Sample("append", 503, 0.01),
        Sample("append", 0, 0.01, error="ReadError"),  # no answer
        Sample("end", 409, 0.05),
        Sample("end", 200, 1.5, retries=1),  # answered after a 503 with Retry-After
    ]
    level = figures(
        "embedded", 4, 2.0, samples, lags=[0.001, 0.2], rss_mib=100.0, load_average="1/1/1"
    )
    assert (level.late_recalls, level.late_in_app, level.recalls) == (1, 0, 2)
    assert level.recall_in_app_p99_ms == 950.0
    assert level.client_lag_p99_ms == 200.0
    assert level.degraded == {"timeout": 1, "overloaded": 1}
    assert level.degraded_share == 2 / 3
    assert (level.server_errors, level.other_errors) == (1, {409: 1})
    assert level.transport_errors == {"ReadError": 1}
    assert level.other_by_route == {"end 409": 1}
    assert level.retried == 1
    assert level.throughput == 3.5
    assert "| embedded | 4 | 7 | 3.5 |" in summary_table([level])
