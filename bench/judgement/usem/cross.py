"""The tuned encoder read as a cross-encoder: the reply's tokens attend to the question's, and
the question's to the reply's, before the head decides.

A head over the two sentence vectors (`PairHead`) reads a bare "ok" the same whatever was
asked, and a yes to half of a two-part question as a yes to the whole (ADR 0109). Here each
side's token features (the encoder's normed [row | n-gram branches], above the frozen table)
read the other side's through one attention layer: per token, its own projection, what it
attended to and their product go through a layer, pooled by mean and max over the side's
tokens. The head reads the pair features of the sentence vectors and both pooled readings.

Lab only: the product runs the same arithmetic in numpy (`adapters/judgement/cross_use.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from factledger.adapters.judgement.cross_use import CROSS_DIM, CROSS_LAYERS, FEATURE_DIM
from factledger.adapters.judgement.tuned_answers_file import CLASSES
from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.usem.model import EMB_DIM, TunedUse, padded
from factledger.bench.judgement.usem.rows import WordPieceRows


class Attends(nn.Module):
    """One side's tokens reading the other side's; [mean | max] over the reading side."""

    def __init__(self) -> None:
        super().__init__()
        self.query = nn.Linear(FEATURE_DIM, CROSS_DIM)
        self.key = nn.Linear(FEATURE_DIM, CROSS_DIM)
        self.value = nn.Linear(FEATURE_DIM, CROSS_DIM)
        self.own = nn.Linear(FEATURE_DIM, CROSS_DIM)
        self.mix = nn.Linear(3 * CROSS_DIM, CROSS_DIM)

    def forward(
        self, a: torch.Tensor, a_mask: torch.Tensor, b: torch.Tensor, b_mask: torch.Tensor
    ) -> torch.Tensor:
        scores = self.query(a) @ self.key(b).transpose(1, 2) / math.sqrt(CROSS_DIM)
        scores = scores.masked_fill(~b_mask[:, None, :], -1e9)
        attended = scores.softmax(-1) @ self.value(b)
        own = self.own(a)
        h = torch.relu(self.mix(torch.cat([own, attended, own * attended], dim=-1)))
        m = a_mask[:, :, None].to(h.dtype)
        h = h * m  # h >= 0, so a zeroed pad never wins the max
        mean = h.sum(1) / m.sum(1)
        out: torch.Tensor = torch.cat([mean, h.max(1).values], dim=-1)
        return out


class CrossPairHead(nn.Module):
    """Logits (yes, no, neither) from the sentence vectors and each side's reading of the
    other's tokens."""

    def __init__(self, dropout: float = 0.1) -> None:
        super().__init__()
        self.reply_reads = Attends()
        self.question_reads = Attends()
        self.drop = nn.Dropout(dropout)
        self.linear = nn.Linear(4 * EMB_DIM + 4 * CROSS_DIM, len(CLASSES))

    def forward(
        self,
        u: torch.Tensor,
        v: torch.Tensor,
        fq: torch.Tensor,
        mq: torch.Tensor,
        fr: torch.Tensor,
        mr: torch.Tensor,
    ) -> torch.Tensor:
        x = torch.cat(
            [
                u,
                v,
                u * v,
                torch.abs(u - v),
                self.reply_reads(fr, mr, fq, mq),
                self.question_reads(fq, mq, fr, mr),
            ],
            dim=-1,
        )
        out: torch.Tensor = self.linear(self.drop(x))
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """The attention layers' weights by the names the product reads (`CROSS_LAYERS`),
        each matrix stored as (inputs, outputs)."""
        out: dict[str, np.ndarray] = {}
        for side, module in (("r", self.reply_reads), ("q", self.question_reads)):
            for name in ("query", "key", "value", "own", "mix"):
                layer = getattr(module, name)
                out[f"{side}.{name}.w"] = layer.weight.detach().numpy().T.copy()
                out[f"{side}.{name}.b"] = layer.bias.detach().numpy().copy()
        if set(out) != set(CROSS_LAYERS):
            raise ValueError("the attention layers differ from the product's names")
        return out


def cross_logits(
    model: TunedUse, rows: WordPieceRows, head: CrossPairHead, pairs: Sequence[LabelledPair]
) -> torch.Tensor:
    questions = sorted({p.question for p in pairs})
    at = {q: i + len(pairs) for i, q in enumerate(questions)}
    x, mask, lengths = padded(rows.many([*(p.reply for p in pairs), *questions]))
    feats = model.token_features(x, mask)
    sums = (feats * mask[:, :, None].to(feats.dtype)).sum(1)
    vectors = model.from_sums(sums, lengths)
    q = torch.tensor([at[p.question] for p in pairs])
    n = len(pairs)
    out: torch.Tensor = head(vectors[q], vectors[:n], feats[q], mask[q], feats[:n], mask[:n])
    return out
