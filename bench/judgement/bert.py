"""The BERT encoder the lab's fine-tuned models share (all-MiniLM-L6-v2's shape), in torch,
and its base weights read from the `model.safetensors` a package ships.

The answer cross-encoder (`cross/model.py`) and the QA reader (`qa_reader/model.py`) are heads
over `Encoder`. It is written out rather than taken from a model library so that training
needs torch alone, with attention as matmuls so that an ONNX export of it is plain (the
cross-encoder is exported for the product). Its modules keep the names the QA reader's saved
states (`reader.pt`) use; `load_base` maps the base checkpoint's names onto them.
Lab only: torch is no dependency of the project.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional

_DTYPES = {"F32": np.float32, "I64": np.int64}
HEAD_WIDTH = 32  # all-MiniLM-L6-v2: 12 heads of 32 over 384
DROPOUT = 0.1


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """A safetensors file's float32 and int64 tensors (others are passed over), read with numpy:
    the format is a JSON header and raw little-endian arrays."""
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    body = memoryview(raw)[8 + size :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] not in _DTYPES:
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(body[begin:end], dtype=_DTYPES[entry["dtype"]]).reshape(
            entry["shape"]
        )
    return tensors


def base_size(base: dict[str, np.ndarray]) -> dict[str, int]:
    """The encoder's size (`Encoder`'s keywords) as the base checkpoint's tensors give it."""
    named = _unprefixed(base)
    layers = 1 + max(int(k.split(".")[2]) for k in named if k.startswith("encoder.layer."))
    vocab, width = named["embeddings.word_embeddings.weight"].shape
    return {"vocab": vocab, "width": width, "layers": layers, "heads": width // HEAD_WIDTH}


class Layer(nn.Module):
    def __init__(self, width: int, heads: int, inner: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.attention_out = nn.Linear(width, width)
        self.attention_norm = nn.LayerNorm(width, eps=1e-12)
        self.inner = nn.Linear(width, inner)
        self.out = nn.Linear(inner, width)
        self.out_norm = nn.LayerNorm(width, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, t, w = x.shape

        def split(y: torch.Tensor) -> torch.Tensor:
            return y.view(b, t, self.heads, w // self.heads).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(w // self.heads) + bias
        attended = (self.dropout(scores.softmax(-1)) @ v).transpose(1, 2).reshape(b, t, w)
        x = self.attention_norm(x + self.dropout(self.attention_out(attended)))
        out: torch.Tensor = self.out_norm(
            x + self.dropout(self.out(functional.gelu(self.inner(x))))
        )
        return out


class Encoder(nn.Module):
    """Token ids, their segment (0: first text, 1: second) and attention mask (1: a token,
    0: padding) -> each token's state."""

    def __init__(
        self,
        *,
        vocab: int = 30522,
        width: int = 384,
        layers: int = 6,
        heads: int = 12,
        dropout: float = DROPOUT,
    ) -> None:
        super().__init__()
        self.words = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(512, width)
        self.types = nn.Embedding(2, width)
        self.embedding_norm = nn.LayerNorm(width, eps=1e-12)
        self.layers = nn.ModuleList(Layer(width, heads, width * 4, dropout) for _ in range(layers))
        self.dropout = nn.Dropout(dropout)

    def states(
        self, ids: torch.Tensor, types: torch.Tensor, attention: torch.Tensor
    ) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)[None, :]
        x = self.words(ids) + self.positions(positions) + self.types(types)
        x = self.dropout(self.embedding_norm(x))
        # Padding is kept out of attention by a large negative score (softmax gives it 0).
        bias = ((1.0 - attention.to(x.dtype)) * -10000.0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        return x


_LAYER_NAMES = {
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention_out",
    "attention.output.LayerNorm": "attention_norm",
    "intermediate.dense": "inner",
    "output.dense": "out",
    "output.LayerNorm": "out_norm",
}
_EMBEDDING_NAMES = {
    "embeddings.word_embeddings": "words",
    "embeddings.position_embeddings": "positions",
    "embeddings.token_type_embeddings": "types",
    "embeddings.LayerNorm": "embedding_norm",
}


def _unprefixed(base: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The checkpoint's tensors named as a bare encoder's (some checkpoints say `bert.`)."""
    return {k.removeprefix("bert."): v for k, v in base.items()}


def load_base(model: Encoder, base: dict[str, np.ndarray], heads: tuple[str, ...]) -> list[str]:
    """The base checkpoint's encoder (every layer) into `model`; returns the model's tensors
    the checkpoint lacked, which must all be its heads' (`heads`: their names' prefixes)."""
    state = {}
    for key, array in _unprefixed(base).items():
        stem, _, leaf = key.rpartition(".")
        tensor = torch.from_numpy(array.copy())
        if stem in _EMBEDDING_NAMES:
            state[f"{_EMBEDDING_NAMES[stem]}.{leaf}"] = tensor
        elif stem.startswith("encoder.layer."):
            parts = stem.split(".")
            state[f"layers.{parts[2]}.{_LAYER_NAMES['.'.join(parts[3:])]}.{leaf}"] = tensor
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(not m.startswith(heads) for m in missing):
        raise ValueError(f"base weights do not fit: missing {missing}, unexpected {unexpected}")
    return sorted(missing)
