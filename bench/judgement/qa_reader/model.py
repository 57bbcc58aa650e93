"""The encoder (BERT as all-MiniLM-L6-v2 has it) with a start/end head and pair flags, in torch.

Written out rather than taken from a model library so that training needs torch alone; the
base weights are read from the `model.safetensors` a package ships (parsed here: the format
is a JSON header and raw little-endian arrays).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from factledger.bench.judgement.qa_reader.pairs import FLAGS

_DTYPES = {"F32": np.float32, "I64": np.int64}
HEAD_WIDTH = 32  # all-MiniLM-L6-v2: 12 heads of 32 over 384


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    body = memoryview(raw)[8 + size :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(body[begin:end], dtype=_DTYPES[entry["dtype"]]).reshape(
            entry["shape"]
        )
        tensors[name] = torch.from_numpy(array.copy())
    return tensors


class Layer(nn.Module):
    def __init__(self, width: int, heads: int, inner: int) -> None:
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
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, w = x.shape

        def split(y: torch.Tensor) -> torch.Tensor:
            return y.view(b, t, self.heads, w // self.heads).transpose(1, 2)

        attended = functional.scaled_dot_product_attention(
            split(self.query(x)),
            split(self.key(x)),
            split(self.value(x)),
            attn_mask=mask,
            dropout_p=0.1 if self.training else 0.0,
        )
        attended = attended.transpose(1, 2).reshape(b, t, w)
        x = self.attention_norm(x + self.dropout(self.attention_out(attended)))
        out: torch.Tensor = self.out_norm(
            x + self.dropout(self.out(functional.gelu(self.inner(x))))
        )
        return out


class QaReader(nn.Module):
    """Token states -> start and end scores per token; `[CLS]` -> the pair's flags."""

    def __init__(
        self, *, vocab: int = 30522, width: int = 384, layers: int = 6, heads: int = 12
    ) -> None:
        super().__init__()
        self.words = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(512, width)
        self.types = nn.Embedding(2, width)
        self.embedding_norm = nn.LayerNorm(width, eps=1e-12)
        self.layers = nn.ModuleList(Layer(width, heads, width * 4) for _ in range(layers))
        self.dropout = nn.Dropout(0.1)
        self.span = nn.Linear(width, 2)
        self.flags = nn.Linear(width, len(FLAGS))

    def states(
        self, ids: torch.Tensor, types: torch.Tensor, attention: torch.Tensor
    ) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)[None, :]
        x = self.words(ids) + self.positions(positions) + self.types(types)
        x = self.dropout(self.embedding_norm(x))
        mask = attention[:, None, None, :].bool()
        for layer in self.layers:
            x = layer(x, mask)
        return x

    def forward(
        self, ids: torch.Tensor, types: torch.Tensor, attention: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self.states(ids, types, attention)
        scores = self.span(x)
        return scores[..., 0], scores[..., 1], self.flags(x[:, 0])


class FieldsReader(QaReader):
    """Every field of a line in one pass: each field's marker state, projected, scores every
    token as the start (and the end) of that field's value; `[CLS]` is "no value"."""

    def __init__(
        self, *, vocab: int = 30522, width: int = 384, layers: int = 6, heads: int = 12
    ) -> None:
        super().__init__(vocab=vocab, width=width, layers=layers, heads=heads)
        self.start_of = nn.Linear(width, width)
        self.end_of = nn.Linear(width, width)
        self.scale = width**-0.5

    def read(
        self, ids: torch.Tensor, types: torch.Tensor, attention: torch.Tensor, markers: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Scores `[batch, field, token]` for starts and ends, flags `[batch, field, flag]`;
        `markers` `[batch, field]` are the fields' marker positions."""
        x = self.states(ids, types, attention)
        at = x.gather(1, markers[..., None].expand(-1, -1, x.shape[-1]))
        start = torch.einsum("bfw,btw->bft", self.start_of(at), x) * self.scale
        end = torch.einsum("bfw,btw->bft", self.end_of(at), x) * self.scale
        return start, end, self.flags(at)


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
_HEADS = ("span.", "flags.", "start_of.", "end_of.")
_EMBEDDING_NAMES = {
    "embeddings.word_embeddings": "words",
    "embeddings.position_embeddings": "positions",
    "embeddings.token_type_embeddings": "types",
    "embeddings.LayerNorm": "embedding_norm",
}


def from_base(path: Path, kind: type[QaReader] = QaReader) -> QaReader:
    """A reader whose encoder is the base model's (every layer), heads freshly initialised."""
    base = read_safetensors(path)
    layers = 1 + max(int(k.split(".")[2]) for k in base if k.startswith("encoder.layer."))
    vocab, width = base["embeddings.word_embeddings.weight"].shape
    reader = kind(vocab=vocab, width=width, layers=layers, heads=width // HEAD_WIDTH)
    state = {}
    for name, tensor in base.items():
        stem, _, leaf = name.rpartition(".")
        if stem in _EMBEDDING_NAMES:
            state[f"{_EMBEDDING_NAMES[stem]}.{leaf}"] = tensor
        elif name.startswith("encoder.layer."):
            parts = stem.split(".")
            state[f"layers.{parts[2]}.{_LAYER_NAMES['.'.join(parts[3:])]}.{leaf}"] = tensor
    missing, unexpected = reader.load_state_dict(state, strict=False)
    if unexpected or any(not m.startswith(_HEADS) for m in missing):
        raise ValueError(f"base weights do not fit: missing {missing}, unexpected {unexpected}")
    return reader
