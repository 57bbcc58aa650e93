"""The tuned multilingual encoder's answer file: one or more members (each the layers it
replaces in the packaged encoder and a pair head), the yes threshold of their mean reading,
and the encoder they were tuned from. Layers are stored as float16, heads as float32."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.embedding.use_multilingual import MODEL_ID
from factledger.adapters.judgement.features import Matrix
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
    """One tuned copy of the encoder: the layers it replaces and its pair head."""

    layers: Mapping[str, Matrix]
    head_weights: Matrix  # (4 * 512, 3), columns in `CLASSES` order
    head_bias: Matrix


@dataclass(frozen=True, slots=True)
class TunedAnswers:
    """What the trainer ships: the members (whose readings are averaged) and the yes
    threshold of that mean."""

    members: tuple[TunedMember, ...]
    yes_min: float
    base: str = MODEL_ID

    def to_bytes(self) -> bytes:
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "members": np.array(len(self.members)),
            "yes_min": np.array(self.yes_min),
            "classes": np.array(CLASSES),
            "base": np.array(self.base),
        }
        for k, member in enumerate(self.members):
            arrays |= {
                f"m{k}.layer.{name}": np.asarray(value, dtype=np.float16)
                for name, value in member.layers.items()
            }
            arrays[f"m{k}.head.w"] = member.head_weights.astype(np.float32)
            arrays[f"m{k}.head.b"] = member.head_bias.astype(np.float32)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
        return buffer.getvalue()

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> TunedAnswers:
        data = read_pinned(path, sha256, TunedAnswersIntegrityError, "tuned answer file")
        return cls.from_bytes(data, path.name)

    @classmethod
    def from_bytes(cls, data: bytes, name: str) -> TunedAnswers:
        """A file's bytes, already checked against its pin."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                if tuple(str(c) for c in z["classes"]) != CLASSES or str(z["base"]) != MODEL_ID:
                    raise TunedAnswersIntegrityError(f"{name}: another encoder or classes")
                members = tuple(_member(z, f"m{k}.", name) for k in range(int(z["members"])))
                if not members:
                    raise TunedAnswersIntegrityError(f"{name}: no member")
                return cls(members, float(z["yes_min"]))
        except (KeyError, ValueError, OSError) as exc:
            raise TunedAnswersIntegrityError(f"{name}: not a tuned answer file") from exc


def _member(z: Mapping[str, npt.NDArray[np.generic]], prefix: str, name: str) -> TunedMember:
    files = list(z.keys())
    layers = {
        k.removeprefix(f"{prefix}layer."): np.asarray(z[k], dtype=np.float32)
        for k in files
        if k.startswith(f"{prefix}layer.")
    }
    unknown = set(layers) - {*TOKEN_LAYERS, *DAN_LAYERS}
    if unknown:
        raise TunedAnswersIntegrityError(f"{name}: unknown layer {min(unknown)}")
    return TunedMember(
        layers,
        np.asarray(z[f"{prefix}head.w"], dtype=np.float32),
        np.asarray(z[f"{prefix}head.b"], dtype=np.float32),
    )


def holds_tuned_answers(path: Path, sha256: str | None) -> bool:
    """Whether a deployment's answer file (checked against its pin first) is a tuned encoder's
    rather than a pair head's; both are `.npz`."""
    data = read_pinned(path, sha256, TunedAnswersIntegrityError, "answer file")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return "members" in z.files
    except (ValueError, OSError):
        return False
