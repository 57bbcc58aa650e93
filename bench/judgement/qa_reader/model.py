"""The QA reader: the lab's BERT encoder (`bench/judgement/bert.py`, as all-MiniLM-L6-v2 has
it) with a start/end head and pair flags, in torch."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from factledger.bench.judgement.bert import (
    HEAD_WIDTH,
    Encoder,
    base_size,
    load_base,
    read_safetensors,
)
from factledger.bench.judgement.qa_reader.onnx_weights import (
    Fit,
    fit_of,
    read_reader_file,
    reader_size,
)
from factledger.bench.judgement.qa_reader.pairs import FLAGS

HEADS = ("span.", "flags.", "start_of.", "end_of.")


class QaReader(Encoder):
    """Token states -> start and end scores per token; `[CLS]` -> the pair's flags."""

    def __init__(
        self, *, vocab: int = 30522, width: int = 384, layers: int = 6, heads: int = 12
    ) -> None:
        super().__init__(vocab=vocab, width=width, layers=layers, heads=heads)
        self.span = nn.Linear(width, 2)
        self.flags = nn.Linear(width, len(FLAGS))

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

    def use_field_words(self) -> None:
        """Each field asks with the mean state of its marker and its own words, not the
        marker's state alone: every marker is the same token, and one epoch after another the
        markers' states stayed alike, so every field's query found the same span (ADR 0106).
        Kept in the weights (a buffer) so that a reader is read as it was trained."""
        self.register_buffer("field_words_pooled", torch.ones(()))

    @property
    def pools_field_words(self) -> bool:
        return "field_words_pooled" in self._buffers

    def read(
        self,
        ids: torch.Tensor,
        types: torch.Tensor,
        attention: torch.Tensor,
        markers: torch.Tensor,
        pool: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Scores `[batch, field, token]` for starts and ends, flags `[batch, field, flag]`;
        `markers` `[batch, field]` are the fields' marker positions, `pool` `[batch, field,
        token]` each field's words' share of its query (read when the reader pools them)."""
        x = self.states(ids, types, attention)
        if self.pools_field_words:
            if pool is None:
                raise ValueError("this reader asks with its fields' words: pass `pool`")
            at = torch.einsum("bft,btw->bfw", pool, x)
        else:
            at = x.gather(1, markers[..., None].expand(-1, -1, x.shape[-1]))
        start = torch.einsum("bfw,btw->bft", self.start_of(at), x) * self.scale
        end = torch.einsum("bfw,btw->bft", self.end_of(at), x) * self.scale
        return start, end, self.flags(at)


def from_base(path: Path, kind: type[QaReader] = QaReader) -> QaReader:
    """A reader whose encoder is the base model's (every layer), heads freshly initialised."""
    base = read_safetensors(path)
    reader = kind(**base_size(base))
    load_base(reader, base, HEADS)
    return reader


def from_onnx(path: Path, sha256: str | None) -> tuple[FieldsReader, Fit]:
    """The one-pass reader an exported ONNX file holds (int8 or float; ADR 0153), asking with
    its fields' words as every exported reader does; the heads the graph does not compute
    (the flags) start as a fresh model's. A file that does not fit is refused, naming what
    does not."""
    weights = read_reader_file(path, sha256)
    reader = FieldsReader(**reader_size(weights, HEAD_WIDTH))
    reader.use_field_words()
    fit = fit_of(
        {name: tuple(array.shape) for name, array in weights.items()},
        {name: tuple(p.shape) for name, p in reader.named_parameters()},
    )
    fit.check(path.name)
    reader.load_state_dict(
        {name: torch.from_numpy(array.copy()) for name, array in weights.items()}, strict=False
    )
    return reader, fit
