"""What batching the sync's embedding would buy: CPU per fact-sized text run one at a time
(as the embedder runs int8 activations) against batches of several texts padded to their
longest, with int8 and with float activations, and how far a batched text's vector moves
from the same text's vector run alone. The texts are the sync bench's facts
(`bench.write.sync.SAID`), each a different sentence."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from factledger.adapters.embedding.onnx.embedder import embed_texts, sentence_tokenizer
from factledger.adapters.embedding.onnx.model_files import OnnxModelFiles, OnnxPreset
from factledger.adapters.embedding.onnx.session import open_encoder
from factledger.bench.machine import load_average
from factledger.bench.write.sync import SAID

MAX_TOKENS = 256  # the embedder's default


@dataclass(frozen=True, slots=True)
class BatchingRow:
    activations: str
    batch: int
    cpu_ms_per_text: float  # the best of `repeats` passes over every text
    alone_cpu_ms_per_text: float  # the same texts, one run each, same activations
    min_cosine_to_alone: float  # of a batched text's vector to its vector run alone
    max_abs_difference: float
    load_average: str


def facts(count: int) -> list[str]:
    """`count` distinct fact-sized sentences, the sync bench's, numbered."""
    return [SAID[n % len(SAID)].format(n=n) for n in range(count)]


def measure_batching(
    preset: OnnxPreset, texts: Sequence[str], batches: Sequence[int], *, repeats: int = 3
) -> list[BatchingRow]:
    rows = []
    for int8 in (True, False):
        files = OnnxModelFiles.preset(preset)
        encoder = open_encoder(
            files.model.read_bytes,
            source_sha256=files.model_sha256 or "",
            threads=1,
            int8_activations=int8,
            trusted=files.is_preset,
        )
        tokenizer = sentence_tokenizer(files.tokenizer.read_bytes(), MAX_TOKENS)

        def run(step: int) -> np.ndarray:
            parts = [
                embed_texts(encoder, tokenizer, texts[i : i + step])  # noqa: B023
                for i in range(0, len(texts), step)
            ]
            return np.vstack(parts)

        alone_cpu = _best_cpu(lambda: run(1), repeats)
        alone = run(1)
        for batch in batches:
            batched = run(batch)
            rows.append(
                BatchingRow(
                    activations="int8" if int8 else "float",
                    batch=batch,
                    cpu_ms_per_text=_best_cpu(lambda: run(batch), repeats) / len(texts) * 1e3,  # noqa: B023
                    alone_cpu_ms_per_text=alone_cpu / len(texts) * 1e3,
                    min_cosine_to_alone=float((batched * alone).sum(axis=1).min()),
                    max_abs_difference=float(np.abs(batched - alone).max()),
                    load_average=load_average(),
                )
            )
    return rows


def _best_cpu(work: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def render(rows: Sequence[BatchingRow]) -> str:
    lines = [
        "| activations | texts per run | CPU ms per text | one at a time, CPU ms per text | "
        "speed-up | min cosine to the text run alone | max abs difference | load avg |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {r.activations} | {r.batch} | {r.cpu_ms_per_text:.3f} | "
        f"{r.alone_cpu_ms_per_text:.3f} | {r.alone_cpu_ms_per_text / r.cpu_ms_per_text:.2f}x | "
        f"{r.min_cosine_to_alone:.5f} | {r.max_abs_difference:.2e} | {r.load_average} |"
        for r in rows
    )
    return "\n".join(lines)
