"""The encoder graphs `factledger-lab embedder bench` compares, and how each is made ready.

- compiled at every start: the compact int8 graph built in the process, as without a cache.
- cached: the same graph, built once into a cache directory and read back (`graph_cache`).
- onnxruntime's own tools instead of ours: its graph optimizer folds the
  dequantized weights into constants, `quantize_dynamic` re-quantizes them (uint8 per column,
  the exact path ADR 0004 explains) and the session applies its own fusions. Written to a file
  once, then read back with the same sha256 check as the cache.

`onnxruntime.transformers.optimizer` (the BERT fusion script) would be the fuller version of
the last, but it needs `torch` and `sympy`, which factledger does not install;
`transformers_optimizer_missing` says what is missing so the report can state it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx
import onnxruntime as ort

from factledger.adapters.embedding.onnx.graph_cache import CompiledGraphCache
from factledger.adapters.embedding.onnx.session import (
    EncoderSession,
    open_encoder,
    session_for,
    session_from_bytes,
)

THREADS = 1


@dataclass(frozen=True, slots=True)
class Variant:
    """One way to get an encoder ready: from nothing (`cold`) and from its stored graph (`warm`,
    None when nothing is stored)."""

    name: str
    cold: Callable[[], EncoderSession]
    warm: Callable[[], EncoderSession] | None


def _options() -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    return options


def _read_verified(path: Path, files: dict[str, bytes]) -> bytes:
    """A model file, read and hashed as the embedder reads its model."""
    content = path.read_bytes()
    files.setdefault(path.name, hashlib.sha256(content).digest())
    if hashlib.sha256(content).digest() != files[path.name]:
        raise RuntimeError(f"{path.name} changed during the bench")
    return content


def variants(model_path: Path, workdir: Path) -> list[Variant]:
    """The three graphs; `workdir` holds their stored files."""
    digests: dict[str, bytes] = {}
    cache_dir = workdir / "cache"
    source_sha256 = hashlib.sha256(model_path.read_bytes()).hexdigest()

    def open_through(cache: CompiledGraphCache | None) -> EncoderSession:
        return open_encoder(
            lambda: _read_verified(model_path, digests),
            source_sha256=source_sha256,
            threads=THREADS,
            int8_activations=True,
            trusted=True,
            cache=cache,
        )

    def cached_cold() -> EncoderSession:
        for stored in cache_dir.glob("*.graph"):
            stored.unlink()
        return open_through(CompiledGraphCache(cache_dir))

    quantized = workdir / "ort-quantized.onnx"

    def ort_cold() -> EncoderSession:
        _read_verified(model_path, digests)
        ort_quantize(model_path, quantized)
        return ort_warm()

    def ort_warm() -> EncoderSession:
        return session_from_bytes(
            _read_verified(quantized, digests), _options(), int8_activations=True, compact=False
        )

    return [
        Variant("compact graph compiled at every start", lambda: open_through(None), None),
        Variant(
            "compact graph, cached",
            cached_cold,
            lambda: open_through(CompiledGraphCache(cache_dir)),
        ),
        Variant("onnxruntime folding + quantize_dynamic, cached", ort_cold, ort_warm),
    ]


def ort_quantize(source: Path, target: Path) -> None:
    """onnxruntime's constant folding, then its dynamic quantization, written to `target`."""
    # Imported here: every `factledger` command imports this module, and the quantization
    # toolkit alone adds ~35 ms to each start.
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as scratch:
        folded = Path(scratch) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        quantize_dynamic(
            folded, target, weight_type=QuantType.QUInt8, per_channel=True, reduce_range=False
        )


def reference_encoder(model_path: Path) -> EncoderSession:
    """The exported graph as shipped, float activations: what every variant should reproduce."""
    return session_for(onnx.load(str(model_path)), _options(), int8_activations=False)


def transformers_optimizer_missing() -> list[str]:
    """The packages `onnxruntime.transformers.optimizer` needs for a BERT model and lacks."""
    return [name for name in ("torch", "sympy") if importlib.util.find_spec(name) is None]


def timed(make: Callable[[], EncoderSession]) -> tuple[float, EncoderSession]:
    started = time.perf_counter()
    encoder = make()
    return time.perf_counter() - started, encoder
