"""A one-pass reader exported for reading without torch: its start and end scores as an ONNX
graph, then quantised to int8 (ADR 0106, step 1 of its wiring).

The graph takes `ids`, `types`, `attention`, and `pool` (each field's words' share of its
query, `fields_pass.field_word_positions`); a reader that pools its fields' words never reads
the marker positions, so they are no input of its graph.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import torch

from factledger.bench.judgement.qa_reader.model import FieldsReader

OPSET = 17
FLOAT_FILE = "qa-reader-float.onnx"
INT8_FILE = "qa-reader-int8.onnx"


class _Scores(torch.nn.Module):
    def __init__(self, reader: FieldsReader) -> None:
        super().__init__()
        self.reader = reader

    def forward(
        self, ids: torch.Tensor, types: torch.Tensor, attention: torch.Tensor, pool: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        markers = torch.zeros(pool.shape[:2], dtype=torch.long)  # unread when pooling
        start, end, _ = self.reader.read(ids, types, attention, markers, pool)
        return start, end


def export(reader: FieldsReader, out: Path) -> dict[str, str]:
    """Writes the float graph and its int8 quantisation into `out`; their SHA-256 by name."""
    if not reader.pools_field_words:
        raise ValueError("only a reader that asks with its fields' words is exported")
    reader.eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    pool = torch.zeros((2, 3, 16))
    for f in range(3):
        pool[:, f, 1 + 2 * f : 3 + 2 * f] = 0.5
    out.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        _Scores(reader).eval(),  # else the export hands the reader back in training mode
        (ids, torch.zeros_like(ids), torch.ones_like(ids), pool),
        str(out / FLOAT_FILE),
        input_names=["ids", "types", "attention", "pool"],
        output_names=["start", "end"],
        dynamic_axes={n: {0: "batch", 1: "tokens"} for n in ("ids", "types", "attention")}
        | {n: {0: "batch", 1: "fields", 2: "tokens"} for n in ("pool", "start", "end")},
        opset_version=OPSET,
        dynamo=False,
    )
    return quantized(out, FLOAT_FILE, INT8_FILE)


def quantized(out: Path, float_file: str, int8_file: str) -> dict[str, str]:
    """`float_file` in `out` quantised to int8 as `int8_file` (weights per channel, activations
    at run time); both files' SHA-256 by name."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(out / float_file), str(out / int8_file), per_channel=True, weight_type=QuantType.QInt8
    )
    return {
        name: hashlib.sha256((out / name).read_bytes()).hexdigest()
        for name in (float_file, int8_file)
    }
