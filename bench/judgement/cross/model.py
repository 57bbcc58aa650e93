"""The answer cross-encoder in torch: a BERT encoder (all-MiniLM-L6-v2's shape) reading
`[CLS] question [SEP] reply [SEP]`, mean-pooled, and a three-way head (yes, no, neither).

The modules are named as the base checkpoint names its tensors, so its weights load by name
(`load_base`). Attention is written out with matmuls so that the ONNX export is plain.
Lab only: the product reads the exported ONNX file (`adapters/judgement/cross_answers.py`).
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

CLASSES = ("yes", "no", "neither")


@dataclass(frozen=True, slots=True)
class Shape:
    vocab: int = 30522
    hidden: int = 384
    layers: int = 6
    heads: int = 12
    intermediate: int = 1536
    positions: int = 512
    types: int = 2


class _Embeddings(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(s.vocab, s.hidden)
        self.position_embeddings = nn.Embedding(s.positions, s.hidden)
        self.token_type_embeddings = nn.Embedding(s.types, s.hidden)
        self.LayerNorm = nn.LayerNorm(s.hidden, eps=1e-12)

    def forward(self, ids: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.word_embeddings(ids) + self.position_embeddings(positions)
        return self.LayerNorm(x + self.token_type_embeddings(types))


class _SelfAttention(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.query = nn.Linear(s.hidden, s.hidden)
        self.key = nn.Linear(s.hidden, s.hidden)
        self.value = nn.Linear(s.hidden, s.hidden)
        self.heads = s.heads


class _Out(nn.Module):
    def __init__(self, inner: int, hidden: int) -> None:
        super().__init__()
        self.dense = nn.Linear(inner, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)


class _Attention(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.self = _SelfAttention(s)
        self.output = _Out(s.hidden, s.hidden)


class _Intermediate(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.dense = nn.Linear(s.hidden, s.intermediate)


class _Layer(nn.Module):
    def __init__(self, s: Shape, dropout: float) -> None:
        super().__init__()
        self.attention = _Attention(s)
        self.intermediate = _Intermediate(s)
        self.output = _Out(s.intermediate, s.hidden)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        a = self.attention.self
        b, n, d = x.shape
        h = a.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, h, d // h).transpose(1, 2)

        q, k, v = split(a.query(x)), split(a.key(x)), split(a.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h) + bias
        ctx = (self.drop(scores.softmax(-1)) @ v).transpose(1, 2).reshape(b, n, d)
        o = self.attention.output
        x = o.LayerNorm(x + self.drop(o.dense(ctx)))
        f = self.output
        inner = nn.functional.gelu(self.intermediate.dense(x))
        return f.LayerNorm(x + self.drop(f.dense(inner)))


class _Encoder(nn.Module):
    def __init__(self, s: Shape, dropout: float) -> None:
        super().__init__()
        self.layer = nn.ModuleList(_Layer(s, dropout) for _ in range(s.layers))


class CrossEncoder(nn.Module):
    """Logits (yes, no, neither) of each pair; `probabilities` is what is exported."""

    def __init__(self, shape: Shape = Shape(), dropout: float = 0.1) -> None:
        super().__init__()
        self.embeddings = _Embeddings(shape)
        self.encoder = _Encoder(shape, dropout)
        self.drop = nn.Dropout(dropout)
        self.classifier = nn.Linear(shape.hidden, len(CLASSES))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        x = self.drop(self.embeddings(ids, types))
        m = mask.to(x.dtype)
        bias = ((1.0 - m) * -10000.0)[:, None, None, :]
        for layer in self.encoder.layer:
            x = layer(x, bias)
        pooled = (x * m[:, :, None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1.0)
        logits: torch.Tensor = self.classifier(self.drop(pooled))
        return logits


class Probabilities(nn.Module):
    """The exported graph: softmax of the logits, in the order of `CLASSES`."""

    def __init__(self, model: CrossEncoder) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        return self.model(ids, mask, types).softmax(-1)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """A safetensors file's float32 tensors, read with numpy (no extra package)."""
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    body = memoryview(raw)[8 + size :]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(body[start:end], dtype=np.float32).reshape(meta["shape"])
    return out


def load_base(model: CrossEncoder, path: Path) -> list[str]:
    """The base checkpoint's tensors into `model` by name; returns the model's tensors the
    checkpoint lacked (the new head's)."""
    tensors = {
        k.removeprefix("bert."): torch.from_numpy(v.copy())
        for k, v in read_safetensors(path).items()
    }
    own = model.state_dict()
    loaded = {k: v for k, v in tensors.items() if k in own and own[k].shape == v.shape}
    model.load_state_dict(loaded, strict=False)
    return sorted(set(own) - set(loaded))
