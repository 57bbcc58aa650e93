"""The answer cross-encoder in torch: the lab's BERT encoder (`bench/judgement/bert.py`,
all-MiniLM-L6-v2's shape) reading `[CLS] question [SEP] reply [SEP]`, mean-pooled, and a
three-way head (yes, no, neither).

Lab only: the product reads the exported ONNX file (`adapters/judgement/cross_answers.py`).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from factledger.bench.judgement.bert import DROPOUT, Encoder, load_base, read_safetensors

CLASSES = ("yes", "no", "neither")


class CrossEncoder(Encoder):
    """Logits (yes, no, neither) of each pair; `probabilities` is what is exported."""

    def __init__(self, dropout: float = DROPOUT) -> None:
        super().__init__(dropout=dropout)
        self.classifier = nn.Linear(self.words.embedding_dim, len(CLASSES))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        x = self.states(ids, types, mask)
        m = mask.to(x.dtype)
        pooled = (x * m[:, :, None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1.0)
        logits: torch.Tensor = self.classifier(self.dropout(pooled))
        return logits


class Probabilities(nn.Module):
    """The exported graph: softmax of the logits, in the order of `CLASSES`."""

    def __init__(self, model: CrossEncoder) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        probabilities: torch.Tensor = self.model(ids, mask, types).softmax(-1)
        return probabilities


def from_base(path: Path) -> tuple[CrossEncoder, list[str]]:
    """A cross-encoder whose encoder is the base checkpoint's (every layer), and the names of
    the tensors the checkpoint lacked (the new head's)."""
    model = CrossEncoder()
    return model, load_base(model, read_safetensors(path), ("classifier.",))
