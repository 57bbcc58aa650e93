"""The compiled encoder graph is built once per model and options, then read from disk."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import onnx
import onnxruntime as ort
import pytest
import structlog

from factledger.adapters import atomic_files
from factledger.adapters.embedding.onnx import embedder as onnx_embedder
from factledger.adapters.embedding.onnx import session as onnx_session
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.graph_cache import (
    CompiledGraph,
    CompiledGraphCache,
    GraphKey,
)
from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    OnnxModelFiles,
    default_cache_dir,
)
from factledger.api.bootstrap.backend import build_embedder
from factledger.api.settings import load_settings

SENTENCES = [
    "what does the customer prefer for delivery on weekdays",
    "allergies",
    "We switched to a new packaging supplier last spring because the old one was late twice",
]
DEFAULT_SHA256 = OnnxModelFiles.preset(DEFAULT_PRESET).model_sha256 or ""
PROBE_IDS = np.array([[101, 2023, 2003, 1037, 4606, 102], [101, 7592, 102, 0, 0, 0]], np.int64)


@pytest.fixture(scope="module")
def model() -> bytes:
    return OnnxModelFiles.preset(DEFAULT_PRESET).model.read_bytes()


class CompileSpy:
    """Counts the compiles `open_encoder` asks for, and lets each one run."""

    def __init__(self) -> None:
        self.calls = 0
        self._compile = onnx_session.compile_encoder

    def __call__(
        self,
        serialized: bytes,
        options: ort.SessionOptions,
        *,
        int8_activations: bool,
        trusted: bool,
    ) -> CompiledGraph:
        self.calls += 1
        return self._compile(
            serialized, options, int8_activations=int8_activations, trusted=trusted
        )


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> CompileSpy:
    spy = CompileSpy()
    monkeypatch.setattr(onnx_session, "compile_encoder", spy)
    return spy


def _open(model: bytes, cache_dir: Path | None) -> onnx_session.EncoderSession:
    cache = CompiledGraphCache(cache_dir) if cache_dir is not None else None
    return onnx_session.open_encoder(
        lambda: model,
        source_sha256=DEFAULT_SHA256,
        threads=1,
        int8_activations=True,
        trusted=True,
        cache=cache,
    )


def _hidden(encoder: onnx_session.EncoderSession) -> np.ndarray:
    return encoder.hidden_states(PROBE_IDS, (PROBE_IDS != 0).astype(np.int64))


def _only_file(directory: Path) -> Path:
    (path,) = directory.iterdir()
    return path


def test_a_miss_compiles_and_stores_then_a_hit_compiles_nothing(
    model: bytes, tmp_path: Path, compiles: CompileSpy
) -> None:
    first = _open(model, tmp_path)
    second = _open(model, tmp_path)

    assert compiles.calls == 1
    assert _only_file(tmp_path).name.endswith("-int8.graph")
    assert second.int8_activations
    assert first.int8_activations
    assert np.array_equal(_hidden(first), _hidden(second))


def test_a_graph_built_by_another_compiler_is_stale_and_rebuilt(
    model: bytes, tmp_path: Path, compiles: CompileSpy
) -> None:
    cache = CompiledGraphCache(tmp_path)
    current = GraphKey(source_sha256=DEFAULT_SHA256, int8_activations=True, trusted=True, heads=12)
    older = dataclasses.replace(current, compiler=current.compiler - 1)
    cache.put(older, CompiledGraph(b"an older graph", int8_activations=True))

    assert cache.get(current) is None
    encoder = _open(model, tmp_path)
    _open(model, tmp_path)

    assert compiles.calls == 1  # rebuilt once, then read back
    assert encoder.int8_activations
    assert cache.get(current) is not None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-1] + bytes([data[-1] ^ 0xFF]), id="payload-bit-flipped"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: b"not a graph at all", id="no-header"),
        pytest.param(lambda data: data.split(b"\n", 1)[0] + b"\n{broken json\n", id="bad-header"),
    ],
)
def test_a_corrupt_graph_is_rebuilt_and_replaced(
    model: bytes,
    tmp_path: Path,
    compiles: CompileSpy,
    damage: Callable[[bytes], bytes],
) -> None:
    expected = _hidden(_open(model, tmp_path))
    path = _only_file(tmp_path)
    path.write_bytes(damage(path.read_bytes()))

    rebuilt = _open(model, tmp_path)
    _open(model, tmp_path)

    assert compiles.calls == 2  # the first build, the rebuild; then a hit
    assert np.array_equal(_hidden(rebuilt), expected)


def test_a_cache_dir_that_cannot_be_created_falls_back_to_compiling_in_memory(
    model: bytes, tmp_path: Path, compiles: CompileSpy
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    unusable = blocker / "cache"  # a directory cannot live under a file

    expected = _hidden(_open(model, None))
    first = _open(model, unusable)
    second = _open(model, unusable)

    assert compiles.calls == 3
    assert np.array_equal(_hidden(first), expected)
    assert np.array_equal(_hidden(second), expected)


def test_no_temporary_file_is_left_behind(model: bytes, tmp_path: Path) -> None:
    _open(model, tmp_path)

    assert [p.name for p in tmp_path.iterdir()] == [_only_file(tmp_path).name]


async def test_an_embedder_on_a_cached_graph_gives_the_freshly_compiled_vectors(
    tmp_path: Path, compiles: CompileSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = await OnnxEmbedder().embed(SENTENCES)
    OnnxEmbedder(cache_dir=tmp_path)  # compiles and stores
    # A new process: nothing loaded yet, the graph only on disk.
    monkeypatch.setattr(onnx_embedder, "_CACHE", {})
    compiles.calls = 0

    cached = OnnxEmbedder(cache_dir=tmp_path)

    assert compiles.calls == 0
    assert cached.model_id == "all-MiniLM-L6-v2-onnx-int8+int8-activations"
    assert np.array_equal(await cached.embed(SENTENCES), fresh)


async def test_the_cache_dir_comes_from_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTLEDGER_EMBEDDER__CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(onnx_embedder, "_CACHE", {})

    async with httpx.AsyncClient() as http:
        embedder = build_embedder(load_settings().embedder, http)
        await embedder.embed(["the model loads on a thread: this waits for it"])

    assert _only_file(tmp_path).name.startswith(DEFAULT_SHA256)


def test_the_default_cache_dir_is_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "factledger" / "onnx"

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "factledger" / "onnx"


def _model_directory(directory: Path) -> Path:
    default = OnnxModelFiles.preset(DEFAULT_PRESET)
    directory.mkdir()
    shutil.copy(default.model, directory / "model.onnx")
    shutil.copy(default.tokenizer, directory / "tokenizer.json")
    return directory


def test_a_pinned_model_is_not_read_when_its_graph_is_cached(
    tmp_path: Path, compiles: CompileSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = _model_directory(tmp_path / "own")
    files = OnnxModelFiles.from_directory(own, model_sha256=DEFAULT_SHA256)
    OnnxEmbedder(files, cache_dir=tmp_path / "cache")
    (own / "model.onnx").unlink()
    monkeypatch.setattr(onnx_embedder, "_CACHE", {})

    OnnxEmbedder(files, cache_dir=tmp_path / "cache")

    assert compiles.calls == 1


def test_an_unpinned_model_that_changed_is_compiled_again(
    tmp_path: Path, compiles: CompileSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = _model_directory(tmp_path / "own")
    files = OnnxModelFiles.from_directory(own)
    OnnxEmbedder(files, cache_dir=tmp_path / "cache")
    model = onnx.load(str(own / "model.onnx"))
    model.doc_string = "re-exported"
    onnx.save(model, str(own / "model.onnx"))
    monkeypatch.setattr(onnx_embedder, "_CACHE", {})

    OnnxEmbedder(files, cache_dir=tmp_path / "cache")

    assert compiles.calls == 2
    assert len(list((tmp_path / "cache").iterdir())) == 2


def test_a_read_only_cache_dir_still_serves_its_graphs_and_compiles_the_others_in_memory(
    model: bytes, tmp_path: Path, compiles: CompileSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = _hidden(_open(model, tmp_path))

    def read_only(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(atomic_files.tempfile, "mkstemp", read_only)
    # Tests run as root, whom file modes do not stop: the directory refuses new files instead.
    with structlog.testing.capture_logs() as logs:
        from_disk = _hidden(_open(model, tmp_path))
        _only_file(tmp_path).unlink()
        compiled = _hidden(_open(model, tmp_path))
        again = _hidden(_open(model, tmp_path))

    assert compiles.calls == 3  # the first build; then nothing; then a compile per open
    assert np.array_equal(from_disk, cached)
    assert np.array_equal(compiled, cached)
    assert np.array_equal(again, cached)
    warnings = [e for e in logs if e["event"] == "embedder.graph_cache_unwritable"]
    assert [w["error"] for w in warnings] == ["PermissionError", "PermissionError"]
    assert str(tmp_path) not in repr(logs)
