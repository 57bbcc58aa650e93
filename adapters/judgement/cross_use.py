"""The tuned multilingual encoder read as a cross-encoder, in numpy.

A member of a tuned answer file may carry cross layers (`CROSS_LAYERS`): then the reply's
token features (the encoder's normed [row | n-gram branches], above its frozen word-piece
table) attend to the question's and the question's to the reply's, and the head reads both
pooled readings beside [u, v, u*v, |u-v|] of the sentence vectors. A bare "ok" to a question
that asks for a value, or a yes to one half of a two-part question, reads differently from
a yes to a yes/no question only when the reader sees both sides' words (ADR 0117).

The arithmetic is the lab's torch model's (`bench/judgement/usem/cross.py`) over the
package's own layers with the member's deltas added; a test keeps the two equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from factledger.adapters.judgement.features import Matrix

CROSS_DIM = 128
FEATURE_DIM = 512 + 3 * 256
_ORDERS = ((2, 0), (3, 1), (5, 2))  # the n-gram branches: (order, tokens of left context)
_CHUNKS = 17  # the word-piece table is quantised in 17 interleaved chunks
CROSS_LAYERS = tuple(
    f"{side}.{name}.{kind}"
    for side in ("r", "q")
    for name in ("query", "key", "value", "own", "mix")
    for kind in ("w", "b")
)


def _layernorm(x: Matrix, gamma: Matrix, beta: Matrix, eps: float) -> Matrix:
    centred = x - x.mean(-1, keepdims=True)
    var = (centred * centred).mean(-1, keepdims=True)
    out: Matrix = centred / np.sqrt(var + eps) * gamma + beta
    return out


def _windows(x: Matrix, n: int, left: int) -> Matrix:
    padded = np.pad(x, ((left, n - 1 - left), (0, 0)))
    t = x.shape[0]
    return np.concatenate([padded[k : k + t] for k in range(n)], axis=-1)


@dataclass(frozen=True, slots=True)
class CrossEncoder:
    """One member: the encoder's layers (package's plus deltas) and its cross layers."""

    layers: Mapping[str, Matrix]
    cross: Mapping[str, Matrix]
    eps: float

    def token_features(self, rows: Matrix) -> Matrix:
        """[T, 512] word-piece rows -> [T, 1280] token features."""
        w = self.layers
        # The three branches' projections and norms side by side, as one layer each.
        j = {
            kind: np.concatenate([w[f"{kind}{n}"] for n, _ in _ORDERS], axis=-1)
            for kind in ("proj", "proj_b", "ln_g", "ln_b")
        }
        x = _layernorm(rows @ j["proj"] + j["proj_b"], j["ln_g"], j["ln_b"], self.eps)
        branches = [rows]
        for i, (n, left) in enumerate(_ORDERS):
            h = x[:, i * 256 : (i + 1) * 256]
            for conv in (1, 2):  # two residual n-gram convolutions
                h = h + np.maximum(_windows(h, n, left) @ w[f"w{conv}_{n}"] + w[f"b{conv}_{n}"], 0)
            branches.append(h)
        return _layernorm(np.concatenate(branches, axis=-1), w["ln_g"], w["ln_b"], self.eps)

    def vector(self, feats: Matrix) -> Matrix:
        """The DAN layers over the token features' sum; an L2-normalised 512-d row."""
        w = self.layers
        length = feats.shape[0]
        mean = (feats.sum(0) @ w["cnn_W"] + length * w["cnn_b"]) / np.sqrt(length)
        y0 = np.maximum(mean @ w["d0"], 0)
        y1 = np.maximum(mean @ w["p1"] + y0 @ w["d1"], 0)
        y2 = np.maximum(y1 @ w["d2"], 0)
        z = np.tanh(y1 @ w["p3"] + y2 @ w["d3"])
        out: Matrix = z / np.sqrt(max(float((z * z).sum()), self.eps))
        return out

    def reads(self, side: str, a: Matrix, b: Matrix) -> Matrix:
        """Side `side`'s tokens `a` reading the other side's `b`: [mean | max] over `a`."""
        c = self.cross

        def dense(name: str, x: Matrix) -> Matrix:
            out: Matrix = x @ c[f"{side}.{name}.w"] + c[f"{side}.{name}.b"]
            return out

        scores = dense("query", a) @ dense("key", b).T / np.sqrt(CROSS_DIM)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attended = (scores / scores.sum(-1, keepdims=True)) @ dense("value", b)
        own = dense("own", a)
        h = np.maximum(dense("mix", np.concatenate([own, attended, own * attended], -1)), 0)
        return np.concatenate([h.mean(0), h.max(0)])


def rows_of(backend: object, text: str) -> Matrix:
    """A text's rows of the packaged encoder's frozen word-piece table, dequantised as its
    own forward pass does (`backend`: the package's numpy backend, already checked)."""
    b: object = backend
    ids = np.array(b.sp.encode(text, out_type=int, add_bos=True, add_eos=True))  # type: ignore[attr-defined]
    chunk = ids % _CHUNKS
    table, scale, lo = b.table, b.scale, b.lo  # type: ignore[attr-defined]
    out: Matrix = (table[ids].astype(np.float32) * scale[chunk, None] + lo[chunk, None]).astype(
        np.float32
    )
    return out


def cross_features(
    member: CrossEncoder, question_rows: Matrix, reply_rows: Sequence[Matrix]
) -> Matrix:
    """Each reply's head input for one question: [u, v, u*v, |u-v|, reply reads, question
    reads]."""
    fq = member.token_features(question_rows).astype(np.float32)
    u = member.vector(fq)
    out = []
    for rows in reply_rows:
        fr = member.token_features(rows).astype(np.float32)
        v = member.vector(fr)
        out.append(
            np.concatenate(
                [u, v, u * v, np.abs(u - v), member.reads("r", fr, fq), member.reads("q", fq, fr)]
            )
        )
    return np.stack(out).astype(np.float32)
