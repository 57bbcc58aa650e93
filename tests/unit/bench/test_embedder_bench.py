"""`factledger-lab embedder bench` measures every graph and keeps the cached one faithful."""

from __future__ import annotations

from pathlib import Path

from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.bench.embedder_bench import BenchOptions, render, run


def test_a_small_run_times_every_graph_and_the_cached_one_gives_todays_vectors(
    tmp_path: Path,
) -> None:
    options = BenchOptions(rounds=1, queries=20, pool=3)

    result = run(OnnxModelFiles.preset(DEFAULT_PRESET), tmp_path, options)

    compiled, cached, ort_quantized = result.results
    assert [len(r.query_s) for r in result.results] == [20, 20, 20]
    assert compiled.warm_s == []
    assert len(cached.warm_s) == len(ort_quantized.warm_s) == 1
    assert cached.cosine_today > 0.99999  # the same graph: the same vectors
    assert compiled.cosine_reference > 0.98
    assert ort_quantized.cosine_reference > 0.98
    assert render(result).count("\n| ") == 3
