"""`python -m factledger.bench.judgement.graph_numerics [GRAPH]`: a judge's int8 graph (the
shipped QA reader by default) as shipped (uint8 activations x int8 weights) and as the product
runs it (weights moved to uint8, ADR 0186), side by side in one run on this machine: the
session's making (best of 3), one 48-token reading (best of 5 x 20) and the largest
difference between their outputs (0 on a CPU with VNNI; on AVX2 alone, what saturation
changes)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnxruntime as ort

from factledger.adapters.judgement.onnx_graph import one_thread_session
from factledger.adapters.judgement.qa_reader.reader import PACKAGED_QA_READER

TOKENS = 48
FIELDS = 3


def _as_shipped(model: bytes) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _feeds(session: ort.InferenceSession) -> dict[str, np.ndarray]:
    """Random ids for every integer input, an even pool over the tokens for a float one."""
    rng = np.random.default_rng(1)
    feeds: dict[str, np.ndarray] = {}
    for given in session.get_inputs():
        if given.type == "tensor(float)":
            feeds[given.name] = np.full((1, FIELDS, TOKENS), 1 / TOKENS, dtype=np.float32)
        elif given.name in {"ids", "input_ids"}:
            feeds[given.name] = rng.integers(1000, 20000, (1, TOKENS)).astype(np.int64)
        elif "type" in given.name:
            feeds[given.name] = np.zeros((1, TOKENS), dtype=np.int64)
        else:
            feeds[given.name] = np.ones((1, TOKENS), dtype=np.int64)
    return feeds


def measure(model: bytes) -> dict[str, object]:
    makers: dict[str, Callable[[bytes], ort.InferenceSession]] = {
        "as_shipped": _as_shipped,
        "exact": one_thread_session,
    }
    out: dict[str, object] = {}
    outputs = []
    for name, make in makers.items():
        made = []
        for _ in range(3):
            started = time.perf_counter()
            session = make(model)
            made.append(time.perf_counter() - started)
        feeds = _feeds(session)
        for _ in range(5):
            session.run(None, feeds)
        runs = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(20):
                session.run(None, feeds)
            runs.append((time.perf_counter() - started) / 20)
        outputs.append(session.run(None, feeds))
        out[name] = {"session_ms": round(min(made) * 1000, 1), "run_ms": round(min(runs) * 1000, 2)}
    shipped, exact = outputs
    out["max_output_difference"] = max(
        float(np.abs(np.asarray(a) - np.asarray(b)).max())
        for a, b in zip(shipped, exact, strict=True)
    )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.graph_numerics")
    parser.add_argument("graph", type=Path, nargs="?", default=PACKAGED_QA_READER)
    args = parser.parse_args(argv)
    sys.stdout.write(json.dumps(measure(args.graph.read_bytes()), indent=1) + "\n")


if __name__ == "__main__":
    main()
