"""A smaller QA reader: the line encoded once, with no field's words in its input, and each
field asking with a query made once from its own words by the same encoder (ADR 0131).

The shipped reader (`model.FieldsReader`) reads `[CLS] [F] name [F] job title ... [SEP] line`
in one pass: for a lead's fourteen fields 35 of an input's 41-49 tokens are the fields' words,
paid again for every line. Here a line is `[CLS] line [SEP] agent's line [SEP]` (the inputs of
`line_inputs.py`), a field is `[CLS] field words [SEP]` read once and pooled into a start and an
end query (`ask`), and a field's start (end) score of a token is its query against the token's
state; `[CLS]` is "no value", as in the shipped reader, so the decoding is the same.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from factledger.bench.judgement.bert import Encoder, base_size, load_base, read_safetensors

HEADS = ("start_of.", "end_of.")


class LineReader(Encoder):
    """Token states of a line; each field's two queries (`ask`) score them as its value's
    start and end."""

    def __init__(self, *, width: int = 384, **size: int) -> None:
        super().__init__(width=width, **size)
        self.start_of = nn.Linear(width, width)
        self.end_of = nn.Linear(width, width)
        self.scale = width**-0.5

    def ask(self, ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
        """Each row a field's words -> its start and end queries, `[field, 2, width]`."""
        x = self.states(ids, torch.zeros_like(ids), attention)
        weights = attention.to(x.dtype)
        pooled = (x * weights[..., None]).sum(1) / weights.sum(1, keepdim=True)
        return torch.stack((self.start_of(pooled), self.end_of(pooled)), 1)

    def read(
        self, ids: torch.Tensor, types: torch.Tensor, attention: torch.Tensor, queries: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end scores `[batch, field, token]` of the lines against `queries`
        `[field, 2, width]` (the same fields asked of every line of the batch)."""
        x = self.states(ids, types, attention)
        start = torch.einsum("fw,btw->bft", queries[:, 0], x) * self.scale
        end = torch.einsum("fw,btw->bft", queries[:, 1], x) * self.scale
        return start, end


def from_base(path: Path, layers: int) -> LineReader:
    """A student whose encoder is the base model's first `layers` layers, heads fresh."""
    base = read_safetensors(path)
    size = base_size(base)
    kept = {
        k: v
        for k, v in base.items()
        if ".layer." not in k or int(k.split(".layer.")[1].split(".")[0]) < layers
    }
    reader = LineReader(**(size | {"layers": layers}))
    load_base(reader, kept, HEADS)
    return reader


def untrained(layers: int, width: int = 384, heads: int = 12) -> LineReader:
    """A student of the given shape with random weights: its cost is its shape's."""
    return LineReader(width=width, layers=layers, heads=heads)
