"""A student reader (`student.LineReader`) exported for reading without torch, as the shipped
reader is (`export.py`): one ONNX graph, quantised to int8.

The graph takes a batch of rows (`ids`, `types`, `attention`) and the fields' queries
(`queries`, `[field, 2, width]`) and gives each row's start and end scores against them, and
each row read as a field's words (`asked`, `[row, 2, width]`): a reader makes its fields'
queries by running the field's words through the same graph once, with no query.
"""

from __future__ import annotations

from pathlib import Path

import torch

from factledger.bench.judgement.qa_reader.export import OPSET, quantized
from factledger.bench.judgement.qa_reader.student import LineReader

FLOAT_FILE = "line-reader-float.onnx"
INT8_FILE = "line-reader-int8.onnx"


class _Graph(torch.nn.Module):
    def __init__(self, reader: LineReader) -> None:
        super().__init__()
        self.reader = reader

    def forward(
        self,
        ids: torch.Tensor,
        types: torch.Tensor,
        attention: torch.Tensor,
        queries: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        r = self.reader
        x = r.states(ids, types, attention)
        start = torch.einsum("fw,btw->bft", queries[:, 0], x) * r.scale
        end = torch.einsum("fw,btw->bft", queries[:, 1], x) * r.scale
        weights = attention.to(x.dtype)
        pooled = (x * weights[..., None]).sum(1) / weights.sum(1, keepdim=True)
        asked = torch.stack((r.start_of(pooled), r.end_of(pooled)), 1)
        return start, end, asked


def export(reader: LineReader, out: Path) -> dict[str, str]:
    """Writes the float graph and its int8 quantisation into `out`; their SHA-256 by name."""
    reader.eval()
    width = reader.start_of.in_features
    ids = torch.ones((2, 12), dtype=torch.long)
    queries = torch.zeros((3, 2, width))
    out.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        _Graph(reader).eval(),
        (ids, torch.zeros_like(ids), torch.ones_like(ids), queries),
        str(out / FLOAT_FILE),
        input_names=["ids", "types", "attention", "queries"],
        output_names=["start", "end", "asked"],
        dynamic_axes={n: {0: "batch", 1: "tokens"} for n in ("ids", "types", "attention")}
        | {"queries": {0: "fields"}, "asked": {0: "batch"}}
        | {n: {0: "batch", 1: "fields", 2: "tokens"} for n in ("start", "end")},
        opset_version=OPSET,
        dynamo=False,
    )
    return quantized(out, FLOAT_FILE, INT8_FILE)
