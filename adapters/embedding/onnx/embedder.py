"""`OnnxEmbedder`: sentence embeddings from an ONNX model run with onnxruntime, offline.

The model is one of the packaged presets (`onnx_models`) or a user's own directory.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from factledger.adapters.deferred_load import DeferredLoad
from factledger.adapters.embedding.onnx.graph_cache import CompiledGraphCache
from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    PRESET_DIMENSIONS,
    ModelIntegrityError,
    OnnxModelFiles,
)
from factledger.adapters.embedding.onnx.token_states import TokenStates, token_states
from factledger.adapters.embedding.onnx.vector_cache import DEFAULT_CAPACITY, VectorCache, text_key
from factledger.application.memory.ports import Vectors

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from factledger.adapters.embedding.onnx.session import EncoderSession


@dataclass(frozen=True, slots=True)
class _Loaded:
    encoder: EncoderSession
    tokenizer: Tokenizer
    dimension: int
    model_id: str


_CACHE: dict[tuple[OnnxModelFiles, int, int, bool, Path | None], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


def _verified_bytes(path: Path, expected: str | None) -> tuple[bytes, str]:
    """The file's content and sha256, read once for both the check and the use."""
    if not path.is_file():
        raise ModelIntegrityError(f"missing model file {path.name}")
    content = path.read_bytes()
    digest = hashlib.sha256(content).hexdigest()
    if expected is not None and digest != expected:
        raise ModelIntegrityError(f"sha256 of {path.name} is not the pinned one")
    return content, digest


def _model_source(files: OnnxModelFiles) -> tuple[Callable[[], bytes], str]:
    """How to read the model file, and its sha256. A pinned file is read (and checked) only
    if its graph must be compiled: a graph cached for the pinned sha256 was compiled from a
    file that passed the check. An unpinned file is read now, to know its sha256."""
    pinned = files.model_sha256
    if pinned is not None:
        return lambda: _verified_bytes(files.model, pinned)[0], pinned
    content, digest = _verified_bytes(files.model, None)
    return lambda: content, digest


def _load(
    files: OnnxModelFiles,
    max_tokens: int,
    threads: int,
    int8_activations: bool,
    cache_dir: Path | None,
    *,
    compile_apart: bool = False,
) -> _Loaded:
    # Loading is slow and the session large: every embedder of a process shares one.
    key = (files, max_tokens, threads, int8_activations, cache_dir)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
        read_model, model_sha256 = _model_source(files)
        tokenizer_json, _ = _verified_bytes(files.tokenizer, files.tokenizer_sha256)
        # onnxruntime is imported by the load, which a served process runs once it is ready:
        # its import was some 5% of the imports of a start.
        from factledger.adapters.embedding.onnx.session import open_encoder

        encoder = open_encoder(
            read_model,
            source_sha256=model_sha256,
            threads=threads,
            int8_activations=int8_activations,
            trusted=files.is_preset,
            cache=CompiledGraphCache(cache_dir) if cache_dir is not None else None,
            compile_apart=compile_apart,
        )
        tokenizer = sentence_tokenizer(tokenizer_json, max_tokens)
        quantized = encoder.int8_activations
        loaded = _Loaded(
            encoder=encoder,
            tokenizer=tokenizer,
            dimension=embed_texts(encoder, tokenizer, ["probe"]).shape[1],
            # Vectors from float and from int8 activations differ slightly (cosine ~0.99):
            # the id tells them apart.
            model_id=f"{files.model_id}+int8-activations" if quantized else files.model_id,
        )
        _CACHE[key] = loaded
        return loaded


def _known_without_loading(files: OnnxModelFiles, int8_activations: bool) -> tuple[int, str] | None:
    """A packaged model's (dimension, model id) as its load will find them; None for any
    other model, which only its load can tell. Our tests build every preset's compact graph,
    which multiplies in int8 whenever int8 activations are asked for."""
    dimension = PRESET_DIMENSIONS.get(files.model_sha256 or "")
    if dimension is None or not files.is_preset:
        return None
    return dimension, f"{files.model_id}+int8-activations" if int8_activations else files.model_id


class ModelLoadMismatchError(RuntimeError):
    """A model loaded in the background is not the one its embedder announced."""


def sentence_tokenizer(tokenizer_json: bytes, max_tokens: int) -> Tokenizer:
    """The model's tokenizer, truncating at `max_tokens` and padding to the batch's longest."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
    # The shipped tokenizer pads every text to 128 tokens; padding to the longest text of
    # the batch is several times faster for short queries.
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token, not a secret
    return tokenizer


def embed_texts(encoder: EncoderSession, tokenizer: Tokenizer, texts: Sequence[str]) -> Vectors:
    """One run of `encoder` over `texts`: pooled, normalised sentence vectors."""
    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    hidden = encoder.hidden_states(ids, mask)
    # Mean pooling over real tokens, then L2 normalisation: sentence-transformers' recipe.
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    vectors: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
    return vectors


class OnnxEmbedder:
    """The default `Embedder`: an ONNX sentence model, loaded once per process.

    - Verifies the pinned sha256 of the model and tokenizer before the first use.
    - With `int8_activations` (the default), a model whose weights are stored as int8 also
      multiplies in int8 (`onnx_quantize`): twice as fast per query, same retrieval quality.
    - Embeds in batches of `batch_size` (one text per run with int8 activations, which is also
      faster: nothing is spent on padding) and runs inference in a worker thread, so the event
      loop keeps serving while a long ingest is embedded.
    - With a `cache_dir`, the compiled graph is kept there between processes (`graph_cache`);
      without one, or when it cannot be used, the graph is compiled at every start. A load in
      the background compiles it in a child process (`compile_apart`), so that requests served
      meanwhile do not wait for the interpreter's lock.
    - Embeds each distinct text of a call once, and keeps the vectors of the last
      `cached_vectors` texts (`vector_cache`; 0 keeps none): a text met again is not run again.
    - With `load_in_background`, a packaged model (whose dimension and id are known without
      loading it) is loaded on a thread, started by `start_deferred_loads` (a served process
      calls it once ready) or by the first call to embed; a call to embed waits for the load
      and gets its error if it failed. Any other model loads before the constructor returns,
      as without it.
    """

    def __init__(
        self,
        files: OnnxModelFiles | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 1,
        int8_activations: bool = True,
        cache_dir: Path | None = None,
        cached_vectors: int = DEFAULT_CAPACITY,
        load_in_background: bool = False,
    ) -> None:
        self._files = files = files or OnnxModelFiles.preset(DEFAULT_PRESET)
        self._batch_size = batch_size
        self.vectors = VectorCache(cached_vectors)
        known = _known_without_loading(files, int8_activations)
        if load_in_background and known is not None:
            self.dimension, self.model_id = known
            self._loading: DeferredLoad[_Loaded] = DeferredLoad.pending(
                # Beside served requests: a graph to compile is compiled by a child process.
                lambda: _load(
                    files, max_tokens, threads, int8_activations, cache_dir, compile_apart=True
                ),
                name="embedder",
            )
        else:
            loaded = _load(files, max_tokens, threads, int8_activations, cache_dir)
            self.dimension, self.model_id = loaded.dimension, loaded.model_id
            self._loading = DeferredLoad.finished(loaded)
        self._checked: _Loaded | None = None

    @property
    def _loaded(self) -> _Loaded:
        """The loaded model, once its load has finished (waiting for it if it has not)."""
        if self._checked is not None:
            return self._checked
        loaded = self._loading.result()
        if (loaded.dimension, loaded.model_id) != (self.dimension, self.model_id):
            raise ModelLoadMismatchError(
                f"{self._files.model_id}: loaded {loaded.model_id} of dimension "
                f"{loaded.dimension}, announced {self.model_id} of dimension {self.dimension}"
            )
        self._checked = loaded
        return loaded

    @property
    def loaded(self) -> bool:
        """Whether the model has finished loading (successfully or not)."""
        return self._loading.done()

    @property
    def files(self) -> OnnxModelFiles:
        """The model's files (their sha256 finds its calibration table)."""
        return self._files

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return self.embed_sync(texts)
        keys = [text_key(text) for text in texts]
        distinct = dict(zip(keys, texts, strict=True))  # first text of each key, in order
        rows = self.vectors.get_many(distinct)
        if len(rows) == len(distinct):
            # All met before: served on the caller's thread, since the hop to a worker thread
            # costs more than the lookup (recall's asked-topic reader embeds the query the
            # backend then embeds again, ADR 0098).
            return self._stacked(keys, rows)
        return await asyncio.to_thread(self._completed, keys, distinct, rows)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = [text_key(text) for text in texts]
        distinct = dict(zip(keys, texts, strict=True))  # first text of each key, in order
        return self._completed(keys, distinct, self.vectors.get_many(distinct))

    def _completed(
        self, keys: list[bytes], distinct: dict[bytes, str], rows: dict[bytes, np.ndarray]
    ) -> Vectors:
        """The vectors of `keys`, running the model for the distinct texts `rows` lacks."""
        missing = [key for key in distinct if key not in rows]
        if missing:
            fresh = self._run([distinct[key] for key in missing])
            new_rows = dict(zip(missing, fresh, strict=True))
            self.vectors.put_many(new_rows)
            rows.update(new_rows)
        return self._stacked(keys, rows)

    @staticmethod
    def _stacked(keys: list[bytes], rows: dict[bytes, np.ndarray]) -> Vectors:
        vectors: Vectors = np.stack([rows[key] for key in keys]).astype(np.float32, copy=False)
        return vectors

    async def token_states(self, texts: Sequence[tuple[str, str | None]]) -> list[TokenStates]:
        """Each (text, context)'s per-token states (`token_states`), one run per text (a
        text's states never depend on its neighbours in a batch), in a worker thread."""
        return await asyncio.to_thread(self.token_states_sync, texts)

    def token_states_sync(self, texts: Sequence[tuple[str, str | None]]) -> list[TokenStates]:
        loaded = self._loaded
        return [token_states(loaded.encoder, loaded.tokenizer, t, c) for t, c in texts]

    def _run(self, texts: Sequence[str]) -> Vectors:
        """Runs the model over `texts`, in batches (see the class)."""
        loaded = self._loaded
        # Int8 activations share one quantization range per run, so a text embedded beside
        # others would get a vector that depends on its neighbours (and their padding).
        step = 1 if loaded.encoder.int8_activations else self._batch_size
        parts = [
            embed_texts(loaded.encoder, loaded.tokenizer, texts[i : i + step])
            for i in range(0, len(texts), step)
        ]
        return parts[0] if len(parts) == 1 else np.vstack(parts)
