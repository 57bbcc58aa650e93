"""The field heads' file: per subject kind, a softmax over the kind's fields and "none".

One `.npz` (no pickles) holds, per kind, the weight matrix over the embedder's vectors, the
bias, the field names and which fields hold several values, with the embedder's model id and
the probability a field must reach to be read. Written by the lab's training command
(`python -m factledger.bench.field_slots train`), read here; the file shipped in the package
is pinned by its SHA-256.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.numpy_archives import open_archive

Matrix = npt.NDArray[np.float32]
SHIPPED = Path(__file__).with_name("data") / "field_heads.npz"
SHIPPED_SHA256 = "b8457ca1becf6a41327d9f50f5bc8996b200d0a3d03cec4b81cdcf63034c622f"
# Which field of the subject's kind an agent's recall query asks about: the same form, every
# field readable (a question may ask about a list field), fitted on the training
# conversations' labelled questions (`train-questions`).
QUESTIONS_SHIPPED = Path(__file__).with_name("data") / "question_heads.npz"
QUESTIONS_SHIPPED_SHA256 = "891dcc2fb7e79c4c52c3a6056aba46dc04dc73c75b74f13f7fe014f4a4830ca4"
# What a recall query asks about and what an unslotted memory speaks of, whatever the
# subject's kind: one head (`ALL_KINDS`) over the rule extractor's slot names and the kinds
# of unslotted facts (`train-topics`, ADR 0098).
TOPICS_SHIPPED = Path(__file__).with_name("data") / "topic_heads.npz"
TOPICS_SHIPPED_SHA256 = "008a511912fd9ca1083daca9751003d7fcdc060f9b27fa148395a6f7317a5c7a"
ALL_KINDS = "*"
NONE = ""  # the class of a sentence that states no field


class HeadFileError(ValueError):
    """The heads' file is not the one pinned, or not a heads' file."""


@dataclass(frozen=True, slots=True)
class KindHead:
    """One kind's softmax: `classes[0]` is NONE, the rest the kind's fields."""

    classes: tuple[str, ...]
    many: frozenset[str]  # the fields that hold several values (lists)
    weights: Matrix  # dimension x len(classes)
    bias: Matrix  # len(classes)

    def probabilities(self, vectors: Matrix) -> Matrix:
        logits = vectors @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probabilities: Matrix = (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)
        return probabilities


@dataclass(frozen=True, slots=True)
class FieldHeads:
    model_id: str
    dimension: int
    min_probability: float
    kinds: dict[str, KindHead]
    # Per class, the keywords its labelled texts use and others' seldom do (the asked-topic
    # head's only, fitted with it by `train-topics`): what a fact of that topic is found by.
    words: dict[str, str] = field(default_factory=dict)


def save_heads(heads: FieldHeads, path: Path) -> str:
    """Writes the heads; returns the file's SHA-256."""
    meta = {
        "model_id": heads.model_id,
        "dimension": heads.dimension,
        "min_probability": heads.min_probability,
        **({"words": dict(sorted(heads.words.items()))} if heads.words else {}),
        "kinds": {
            kind: {"classes": list(h.classes), "many": sorted(h.many)}
            for kind, h in sorted(heads.kinds.items())
        },
    }
    arrays: dict[str, npt.NDArray[np.generic]] = {}
    for n, kind in enumerate(sorted(heads.kinds)):
        arrays[f"w{n}"] = heads.kinds[kind].weights.astype(np.float32)
        arrays[f"b{n}"] = heads.kinds[kind].bias.astype(np.float32)
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    with path.open("wb") as out:
        np.savez_compressed(out, allow_pickle=False, **arrays)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_heads(path: Path = SHIPPED, sha256: str | None = SHIPPED_SHA256) -> FieldHeads:
    """The heads at `path`, checked against `sha256` (None: a deployment's own file, unpinned)."""
    data = path.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise HeadFileError(f"{path.name}: SHA-256 differs from the pinned one")
    try:
        with open_archive(data) as npz:
            meta = json.loads(bytes(npz["meta"]).decode())
            kinds = {}
            for n, kind in enumerate(sorted(meta["kinds"])):
                spec = meta["kinds"][kind]
                kinds[kind] = KindHead(
                    classes=tuple(spec["classes"]),
                    many=frozenset(spec["many"]),
                    weights=np.asarray(npz[f"w{n}"], dtype=np.float32),
                    bias=np.asarray(npz[f"b{n}"], dtype=np.float32),
                )
    except (KeyError, ValueError, OSError) as exc:
        raise HeadFileError(f"{path.name}: not a field heads file ({type(exc).__name__})") from exc
    return FieldHeads(
        model_id=str(meta["model_id"]),
        dimension=int(meta["dimension"]),
        min_probability=float(meta["min_probability"]),
        words={str(k): str(v) for k, v in (meta.get("words") or {}).items()},
        kinds=kinds,
    )


def load_question_heads(
    path: Path = QUESTIONS_SHIPPED, sha256: str | None = QUESTIONS_SHIPPED_SHA256
) -> FieldHeads:
    """The question heads at `path`, checked against `sha256` (None: a deployment's own file)."""
    return load_heads(path, sha256)


def load_topic_heads(
    path: Path = TOPICS_SHIPPED, sha256: str | None = TOPICS_SHIPPED_SHA256
) -> FieldHeads:
    """The asked-topic head at `path` (one kind, `ALL_KINDS`), checked against `sha256`."""
    return load_heads(path, sha256)
