"""`factledger-lab pgvector bench` runs end to end at smoke size and prints its table."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from factledger.bench.cli.main import app
from factledger.bench.pgvector.data import sentence_pool

pytestmark = pytest.mark.integration


def test_the_bench_command_prints_both_backends_side_by_side() -> None:
    args = [
        "pgvector",
        "bench",
        "--small", "6x20",
        "--large", "2x300",
        "--queries", "20",
        "--pool", "400",
        "--ann-min-facts", "200",
        "--port-documents", "3",
        "--embedder", "hashing",
    ]  # fmt: skip

    result = CliRunner().invoke(app, args)

    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| ")]
    backends = [row.split("|")[1].strip() for row in rows[1:]]
    assert backends == [
        "pgvector",
        "pgvector",
        "pgvector",
        "pgvector+HNSW",
        "pgvector+mirror",
        "in-memory",
        "in-memory",
    ]
    # Exact search is exact: recall@3 against numpy's ranking (cosine lifted by keywords,
    # the memories-mode score) is 1 on both engines.
    exact = [row for row in rows[1:] if "HNSW" not in row and "ingest_transcript" not in row]
    assert all(row.split("|")[9].strip() == "1.000" for row in exact)
    # pgvector's searched tiers are set against their floor, measured in the same run.
    pgvector = [row for row in exact if row.split("|")[1].strip() == "pgvector"]
    assert all(row.split("|")[11].strip().endswith("x") for row in pgvector)
    # The database's search and its other plans took turns with the floor, CPU included.
    turns = next(line for line in result.output.splitlines() if "taking turns" in line)
    assert "; database: p50/p95/p99" in turns
    assert "database, ef_search 40: p50/p95/p99" in turns
    assert "database, lexical depth 200: p50/p95/p99" in turns
    assert "ms server" in turns
    # The default search, on the mirror (ADR 0056), first; the database's forms after it.
    assert "; mirror: p50/p95/p99" in turns
    assert "p95 / floor p95: mirror" in turns
    # The mirror scores every fact: its answers are the database's exact ranking's.
    mirror = next(row for row in rows[1:] if row.split("|")[1].strip() == "pgvector+mirror")
    assert mirror.split("|")[9].strip() == "1.000"


def test_the_sentence_pool_is_distinct_and_refuses_sizes_it_cannot_supply() -> None:
    pool = sentence_pool(12_000, seed=7)

    assert len(set(pool)) == 12_000
    assert pool == sentence_pool(12_000, seed=7)
    with pytest.raises(ValueError, match="distinct sentences"):
        sentence_pool(10_000_000, seed=7)


def test_the_onnx_bench_times_both_activation_settings_on_the_same_queries() -> None:
    args = [
        "pgvector",
        "bench",
        "--small", "4x20",
        "--large", "0x0",
        "--queries", "12",
        "--pool", "120",
        "--port-documents", "1",
        "--no-in-memory",
    ]  # fmt: skip

    result = CliRunner().invoke(app, args)

    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if "query embedding" in line]
    assert any("by all-MiniLM-L6-v2-onnx-int8 (same queries" in note for note in notes), notes
    assert "embedder all-MiniLM-L6-v2-onnx-int8+int8-activations" in result.output


def test_with_a_calibrated_model_the_turns_include_recall_at_its_own_threshold() -> None:
    args = [
        "pgvector",
        "bench",
        "--small", "0x0",
        "--large", "2x150",
        "--queries", "12",
        "--pool", "320",
        "--ann-min-facts", "100",
        "--port-documents", "1",
        "--no-in-memory",
        "--no-compare-activations",
    ]  # fmt: skip

    result = CliRunner().invoke(app, args)

    assert result.exit_code == 0, result.output
    turns = next(line for line in result.output.splitlines() if "taking turns" in line)
    # The default model's table maps recall's 0.55 to a raw score well above 0.
    assert re.search(r"database, recall's threshold \(raw 0\.[1-9]\d*\)", turns)
    assert re.search(r"recall's threshold \(raw 0\.[1-9]", turns.split("p95 / floor p95:")[1])
