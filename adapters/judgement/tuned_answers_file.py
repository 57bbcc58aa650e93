"""The tuned multilingual encoder's answer file: one or more members (each what the tuning
moved in the packaged encoder's layers, and a pair head), the yes threshold of their mean
reading, and the encoder they were tuned from.

A delta of a matrix is stored as int8 with a float32 scale per column (the tuning moves a
weight by about 1% of its size, so float16 copies of the tuned layers would round away a
twentieth of what was learnt, in twice the bytes); a vector's delta, and the heads, as
float32."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.embedding.use_multilingual import MODEL_ID
from factledger.adapters.judgement.cross_use import CROSS_LAYERS
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.numpy_archives import open_archive
from factledger.adapters.pinned_files import read_pinned
from factledger.application.judgement.types import Reply

CLASSES = (Reply.YES.value, Reply.NO.value, Reply.NEITHER.value)
ORDERS = ((2, 0), (3, 1), (5, 2))  # the n-gram branches: (order, tokens of left context)
_BRANCH_LAYERS = ("proj", "proj_b", "ln_g", "ln_b", "w1_", "b1_", "w2_", "b2_")
TOKEN_LAYERS = (*(f"{kind}{n}" for n, _ in ORDERS for kind in _BRANCH_LAYERS), "ln_g", "ln_b")
DAN_LAYERS = ("cnn_W", "cnn_b", "d0", "d1", "p1", "d2", "p3", "d3")


class TunedAnswersIntegrityError(RuntimeError):
    """The tuned answer file is missing, differs from its pin, or is not one."""


@dataclass(frozen=True, slots=True)
class TunedMember:
    """One tuned copy of the encoder: what it adds to the package's layers, and its pair head."""

    deltas: Mapping[str, Matrix]
    head_weights: Matrix  # (4 * 512 [+ 4 * CROSS_DIM], 3), columns in `CLASSES` order
    head_bias: Matrix
    cross: Mapping[str, Matrix] = field(default_factory=dict)  # `CROSS_LAYERS`, or none


@dataclass(frozen=True, slots=True)
class TunedAnswers:
    """What the trainer ships: the members (whose readings are averaged) and the yes
    threshold of that mean."""

    members: tuple[TunedMember, ...]
    yes_min: float
    base: str = MODEL_ID
    # Where the file reads beside the forget flag, the flag's bar under which it is not asked
    # (ADR 0165); None for a reader of replies.
    gate: float | None = None

    def to_bytes(self) -> bytes:
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "members": np.array(len(self.members)),
            "yes_min": np.array(self.yes_min),
            "classes": np.array(CLASSES),
            "base": np.array(self.base),
        }
        if self.gate is not None:
            arrays["gate"] = np.array(self.gate)
        for k, member in enumerate(self.members):
            for name, delta in member.deltas.items():
                arrays |= _stored(f"m{k}.", name, delta)
            for name, weights in member.cross.items():
                arrays |= _stored(f"m{k}.", f"cross.{name}", weights)
            arrays[f"m{k}.head.w"] = member.head_weights.astype(np.float32)
            arrays[f"m{k}.head.b"] = member.head_bias.astype(np.float32)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
        return buffer.getvalue()

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> TunedAnswers:
        return cls.from_bytes(cls.checked_bytes(path, sha256), path.name)

    @staticmethod
    def checked_bytes(path: Path, sha256: str | None) -> bytes:
        """The file's bytes once they match the pin and name the encoder, the classes and
        the members (read from the archive's small entries; the members are not unpacked)."""
        data = read_pinned(path, sha256, TunedAnswersIntegrityError, "tuned answer file")
        try:
            with open_archive(data) as z:
                if tuple(str(c) for c in z["classes"]) != CLASSES or str(z["base"]) != MODEL_ID:
                    raise TunedAnswersIntegrityError(f"{path.name}: another encoder or classes")
                if int(z["members"]) < 1:
                    raise TunedAnswersIntegrityError(f"{path.name}: no member")
        except (KeyError, ValueError, OSError) as exc:
            raise TunedAnswersIntegrityError(f"{path.name}: not a tuned answer file") from exc
        return data

    @classmethod
    def from_bytes(cls, data: bytes, name: str) -> TunedAnswers:
        """A file's bytes, already checked against its pin."""
        try:
            with open_archive(data) as z:
                if tuple(str(c) for c in z["classes"]) != CLASSES or str(z["base"]) != MODEL_ID:
                    raise TunedAnswersIntegrityError(f"{name}: another encoder or classes")
                members = tuple(_member(z, f"m{k}.", name) for k in range(int(z["members"])))
                if not members:
                    raise TunedAnswersIntegrityError(f"{name}: no member")
                gate = float(z["gate"]) if "gate" in z else None
                return cls(members, float(z["yes_min"]), gate=gate)
        except (KeyError, ValueError, OSError) as exc:
            raise TunedAnswersIntegrityError(f"{name}: not a tuned answer file") from exc


def _stored(prefix: str, name: str, delta: Matrix) -> dict[str, npt.NDArray[np.generic]]:
    if delta.ndim < 2:
        return {f"{prefix}delta.{name}": np.asarray(delta, dtype=np.float32)}
    scale = np.maximum(np.abs(delta).max(axis=0), 1e-12) / 127.0
    return {
        f"{prefix}delta.{name}": np.round(delta / scale).astype(np.int8),
        f"{prefix}scale.{name}": scale.astype(np.float32),
    }


def _member(z: Mapping[str, npt.NDArray[np.generic]], prefix: str, name: str) -> TunedMember:
    deltas = {}
    for key in z:
        if key.startswith(f"{prefix}delta."):
            layer = key.removeprefix(f"{prefix}delta.")
            delta = np.asarray(z[key], dtype=np.float32)
            if f"{prefix}scale.{layer}" in z:
                delta = delta * np.asarray(z[f"{prefix}scale.{layer}"], dtype=np.float32)
            deltas[layer] = delta
    cross = {k.removeprefix("cross."): v for k, v in deltas.items() if k.startswith("cross.")}
    deltas = {k: v for k, v in deltas.items() if not k.startswith("cross.")}
    unknown = set(deltas) - {*TOKEN_LAYERS, *DAN_LAYERS}
    if unknown:
        raise TunedAnswersIntegrityError(f"{name}: unknown layer {min(unknown)}")
    if cross and set(cross) != set(CROSS_LAYERS):
        raise TunedAnswersIntegrityError(f"{name}: cross layers incomplete")
    return TunedMember(
        deltas,
        np.asarray(z[f"{prefix}head.w"], dtype=np.float32),
        np.asarray(z[f"{prefix}head.b"], dtype=np.float32),
        cross,
    )


def holds_tuned_answers(path: Path, sha256: str | None) -> bool:
    """Whether a deployment's answer file (checked against its pin first) is a tuned encoder's
    rather than a pair head's; both are `.npz`."""
    data = read_pinned(path, sha256, TunedAnswersIntegrityError, "answer file")
    try:
        with open_archive(data) as z:
            return "members" in z.files
    except (ValueError, OSError):
        return False
