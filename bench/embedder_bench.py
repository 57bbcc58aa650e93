"""`factledger-lab embedder bench`: what each encoder graph costs to get ready, and to run.

For each graph of `embedder_graphs`, in one run so they share the machine's load:

- ready time: from the model file to a session, cold (nothing stored) and warm (its stored
  graph read back), the median of `rounds` rounds, variants interleaved within each round;
- query latency: the pgvector bench's questions, one text per run, variants interleaved;
- throughput: the sentence pool embedded one text per run (as the embedder does with int8
  activations), sentences per second;
- faithfulness: cosine of each graph's vectors against the exported graph in float, and
  against the compact graph compiled in the process, on fixed sentences.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from factledger.adapters.embedding.onnx.embedder import embed_texts, sentence_tokenizer
from factledger.adapters.embedding.onnx.model_files import OnnxModelFiles
from factledger.adapters.embedding.onnx.session import EncoderSession
from factledger.application.memory.ports import Vectors
from factledger.bench.embedder_graphs import (
    Variant,
    reference_encoder,
    timed,
    transformers_optimizer_missing,
    variants,
)
from factledger.bench.pgvector.data import question, sentence_pool

FAITHFULNESS_SENTENCES = (
    "what does the customer prefer for delivery on weekdays",
    "allergies",
    "We switched to a new packaging supplier last spring because the old one was late twice",
    "The invoice for the warehouse lease is due on the first of each month",
    "My daughter starts school in September",
    "who makes their boxes?",
)


@dataclass(frozen=True, slots=True)
class BenchOptions:
    rounds: int = 5
    queries: int = 500
    pool: int = 300
    seed: int = 7


@dataclass(slots=True)
class VariantResult:
    name: str
    cold_s: list[float] = field(default_factory=list)
    warm_s: list[float] = field(default_factory=list)
    query_s: list[float] = field(default_factory=list)
    pool_s: float = 0.0
    cosine_reference: float = float("nan")
    cosine_today: float = float("nan")


@dataclass(frozen=True, slots=True)
class BenchResult:
    options: BenchOptions
    results: list[VariantResult]
    optimizer_missing: list[str]


def run(files: OnnxModelFiles, workdir: Path, options: BenchOptions) -> BenchResult:
    """Measures every variant; `workdir` holds the stored graphs (a temporary folder)."""
    tokenizer = sentence_tokenizer(files.tokenizer.read_bytes(), max_tokens=256)
    graphs = variants(files.model, workdir)
    results = [VariantResult(v.name) for v in graphs]
    encoders = _ready_times(graphs, results, options.rounds)
    rnd = random.Random(options.seed)
    pool = sentence_pool(options.pool, options.seed)
    queries = [question(rnd.choice(pool), rnd) for _ in range(options.queries)]
    _latencies(encoders, tokenizer, queries, results)
    for encoder, result in zip(encoders, results, strict=True):
        result.pool_s = sum(_timed_embedding(encoder, tokenizer, text) for text in pool)
    _faithfulness(files.model, encoders, tokenizer, results)
    return BenchResult(options, results, transformers_optimizer_missing())


def _ready_times(
    graphs: list[Variant], results: list[VariantResult], rounds: int
) -> list[EncoderSession]:
    encoders: list[EncoderSession] = []
    for _ in range(rounds):
        encoders = []
        for graph, result in zip(graphs, results, strict=True):
            cold_s, encoder = timed(graph.cold)
            result.cold_s.append(cold_s)
            if graph.warm is not None:
                warm_s, encoder = timed(graph.warm)
                result.warm_s.append(warm_s)
            encoders.append(encoder)
    return encoders


def _latencies(
    encoders: list[EncoderSession],
    tokenizer: Tokenizer,
    queries: list[str],
    results: list[VariantResult],
) -> None:
    for text in queries[:20]:  # warm-up: first runs allocate
        for encoder in encoders:
            embed_texts(encoder, tokenizer, [text])
    for text in queries:
        for encoder, result in zip(encoders, results, strict=True):
            result.query_s.append(_timed_embedding(encoder, tokenizer, text))


def _timed_embedding(encoder: EncoderSession, tokenizer: Tokenizer, text: str) -> float:
    started = time.perf_counter()
    embed_texts(encoder, tokenizer, [text])
    return time.perf_counter() - started


def _faithfulness(
    model: Path,
    encoders: list[EncoderSession],
    tokenizer: Tokenizer,
    results: list[VariantResult],
) -> None:
    reference = _vectors(reference_encoder(model), tokenizer)
    today = _vectors(encoders[0], tokenizer)
    for encoder, result in zip(encoders, results, strict=True):
        vectors = _vectors(encoder, tokenizer)
        result.cosine_reference = float((vectors * reference).sum(axis=1).min())
        result.cosine_today = float((vectors * today).sum(axis=1).min())


def _vectors(encoder: EncoderSession, tokenizer: Tokenizer) -> Vectors:
    return np.vstack([embed_texts(encoder, tokenizer, [t]) for t in FAITHFULNESS_SENTENCES])


def render(result: BenchResult) -> str:
    """A markdown table, one row per graph, and a note on the transformers optimizer."""
    rounds = result.options.rounds
    lines = [
        f"| graph | ready, cold s (median of {rounds}) | ready, warm s | query p50 / p95 ms "
        f"({result.options.queries}) | sentences/s ({result.options.pool}, one per run) "
        "| min cosine vs exported float | min cosine vs compiled at every start |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in result.results:
        p50, p95 = np.percentile(np.array(row.query_s) * 1e3, [50, 95])
        warm = f"{statistics.median(row.warm_s):.3f}" if row.warm_s else "-"
        lines.append(
            f"| {row.name} | {statistics.median(row.cold_s):.3f} | {warm} "
            f"| {p50:.2f} / {p95:.2f} | {result.options.pool / row.pool_s:.0f} "
            f"| {row.cosine_reference:.4f} | {row.cosine_today:.4f} |"
        )
    if result.optimizer_missing:
        lines.append(
            "\nonnxruntime.transformers.optimizer (BERT fusions) not measured: it needs "
            f"{', '.join(result.optimizer_missing)}, not installed."
        )
    return "\n".join(lines)
