"""Writes the report: `report.json` (everything), `report.md` (the tables), plots beside them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

Json = dict[str, Any]
LOCOMO_BM25_RECALL = {"1": 0.28, "3": 0.45, "5": 0.50, "10": 0.57}
LOCOMO_BM25_RECALL10_BY_CATEGORY = {"c1": 0.27, "c2": 0.68, "c3": 0.27, "c4": 0.66}
REFERENCES: dict[str, object] = {
    "locomo_bm25_turn_recall": LOCOMO_BM25_RECALL,
    "locomo_bm25_recall10_by_category": LOCOMO_BM25_RECALL10_BY_CATEGORY,
    "prefeval_bm25_said_hit": {
        "travel_restaurant": [0.98, 1.00, 1.00],
        "entertain_shows": [0.82, 0.97, 0.98],
    },
    "source": "the datasets' READMEs (plain BM25 over turns; hit@1/3/10 for PrefEval)",
}
LOCOMO_TARGET = 0.57
LIFECYCLE_ROWS = (
    ("slot_checks", "slot questions asked"),
    ("current_above_stale", "current value ranked above the stale one"),
    ("current_in_answer", "current value in the top 3"),
    ("stale_only_answers", "stale-only answers (stale in top 3, current not)"),
    ("facts_stored", "facts stored"),
    ("inferred_facts", "inferred facts stored (so the leak check is not vacuous)"),
    ("inferred_leaks", "inferred facts in default recall"),
    ("forgotten_checks", "subjects with a forgotten fact"),
    ("forgotten_recalled", "forgotten facts recalled"),
    ("expired_checks", "subjects with an expired fact"),
    ("expired_recalled", "expired facts recalled"),
    ("cross_namespace_queries", "cross-namespace probes"),
    ("cross_namespace_leaks", "cross-namespace leaks (must be 0)"),
)
LATENCY_ROWS = (
    ("recall_p50_ms", "recall p50 (ms)"),
    ("recall_p95_ms", "recall p95 (ms)"),
    ("recall_p99_ms", "recall p99 (ms)"),
    ("search_p50_ms", "raw search p50 (ms)"),
    ("search_p95_ms", "raw search p95 (ms)"),
    ("search_p99_ms", "raw search p99 (ms)"),
    ("record_visible_p50_ms", "record ingest to searchable, p50 (ms)"),
    ("record_visible_max_ms", "record ingest to searchable, max (ms)"),
    ("transcript_visible_p50_ms", "transcript ingest to searchable, p50 (ms)"),
    ("transcript_visible_max_ms", "transcript ingest to searchable, max (ms)"),
    ("not_visible", "writes not searchable within 30 s"),
    ("fail_open_rate", "fail-open rate under the 1 s recall budget"),
    ("budgeted_recalls", "recalls under the budget"),
    ("throughput_rps", "throughput with concurrent agents (recalls/s)"),
    ("agents", "concurrent agents"),
    ("concurrent_p95_ms", "recall p95 under concurrency (ms)"),
)


def clean(value: Any) -> Any:
    """NaN becomes null, so the JSON stays standard."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean(item) for item in value]
    return value


def write_json(report: Json, out_dir: Path) -> Path:
    path = out_dir / "report.json"
    path.write_text(json.dumps(clean(report), indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def backend_label(name: str, result: Json) -> str:
    return f"{name} (SIMULATED)" if result.get("simulated") else name
