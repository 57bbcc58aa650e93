"""Learned heads: multinomial logistic regressions over `features`, loaded from one `.npz`.

The file holds, per head, its weights (`<head>.w`, features x classes), bias (`<head>.b`)
and class names (`<head>.classes`), and, once, the embedder model it was trained over
(`model_id`), the n-gram buckets (`buckets`), the smallest probability of a yes that
confirms (`yes_min`), of a clause stating a field (`field_min`) and of a sentence asking to
forget (`forget_min`). Heads a file holds beyond those read here are ignored (an older file's
forget-field head: ADR 0172 reads a request's field from the words each field holds).
Its SHA-256 is checked before a byte of it is used.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.numpy_archives import open_archive
from factledger.adapters.pinned_files import read_pinned

HEAD_NAMES = ("statement", "hedged", "forget", "correction", "answer", "field")
# The span tagger (a file without it reads fields by clause).
OPTIONAL_HEADS = ("span",)


def write_arrays(path: Path, arrays: dict[str, npt.NDArray[np.generic]]) -> str:
    """Writes `arrays` as one compressed `.npz`; returns its SHA-256, to pin."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    data = buffer.getvalue()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


class HeadsIntegrityError(RuntimeError):
    """The heads file is missing, its SHA-256 differs from the pinned one, or it lacks a head."""


@dataclass(frozen=True, slots=True)
class Head:
    weights: Matrix
    bias: Matrix
    classes: tuple[str, ...]

    def probabilities(self, x: Matrix) -> Matrix:
        logits = x @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        p: Matrix = e / e.sum(axis=1, keepdims=True)
        return p

    def column(self, name: str) -> int:
        return self.classes.index(name)


@dataclass(frozen=True, slots=True)
class Heads:
    heads: dict[str, Head]
    model_id: str
    buckets: int
    yes_min: float
    field_min: float = 0.5
    token_min: float = 0.5  # a token's probability from which it is part of a field's value
    span_min: float = 0.5  # a span's tokens' mean probability from which it is a value
    span_values: bool = False  # whether field statements are narrowed to the tagger's spans
    forget_min: float = 0.5  # the forget flag's probability from which a sentence asks to forget

    def __getitem__(self, name: str) -> Head:
        return self.heads[name]

    def save(self, path: Path) -> str:
        """Writes the file; returns its SHA-256, to pin."""
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "model_id": np.array(self.model_id),
            "buckets": np.array(self.buckets),
            "yes_min": np.array(self.yes_min),
            "field_min": np.array(self.field_min),
            "token_min": np.array(self.token_min),
            "span_min": np.array(self.span_min),
            "span_values": np.array(self.span_values),
            "forget_min": np.array(self.forget_min),
        }
        for name, head in self.heads.items():
            arrays[f"{name}.w"] = head.weights
            arrays[f"{name}.b"] = head.bias
            arrays[f"{name}.classes"] = np.array(head.classes)
        return write_arrays(path, arrays)

    @classmethod
    def load(cls, path: Path, sha256: str | None, names: tuple[str, ...] = HEAD_NAMES) -> Heads:
        data = read_pinned(path, sha256, HeadsIntegrityError, "judgement heads")
        with open_archive(data) as z:
            missing = [n for n in names if f"{n}.w" not in z.files]
            if missing:
                raise HeadsIntegrityError(f"judgement heads {path.name}: no head {missing[0]}")
            heads = {
                n: Head(
                    z[f"{n}.w"].astype(np.float32),
                    z[f"{n}.b"].astype(np.float32),
                    tuple(str(c) for c in z[f"{n}.classes"]),
                )
                for n in (*names, *(o for o in OPTIONAL_HEADS if f"{o}.w" in z.files))
            }
            return cls(
                heads,
                str(z["model_id"]),
                int(z["buckets"]),
                float(z["yes_min"]),
                float(z["field_min"]),
                float(z["token_min"]) if "token_min" in z.files else 0.5,
                float(z["span_min"]) if "span_min" in z.files else 0.5,
                bool(z["span_values"]) if "span_values" in z.files else False,
                float(z["forget_min"]) if "forget_min" in z.files else 0.5,
            )
