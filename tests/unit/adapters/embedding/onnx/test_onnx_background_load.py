"""An embedder that loads its model on a thread (`load_in_background`): it announces the
dimension and id its load will find, a call to embed waits for the load and gets exactly
the vectors of a model loaded before the constructor returned, and a failed load is every
waiter's error, never a hang. No test here times anything: waiting is shown by holding the
load back."""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from factledger.adapters import deferred_load
from factledger.adapters.deferred_load import finish_deferred_loads, start_deferred_loads
from factledger.adapters.embedding.onnx import embedder as onnx_embedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    ModelIntegrityError,
    OnnxModelFiles,
    OnnxPreset,
)
from factledger.application.errors import ModelUnavailableError

TEXTS = ["We now buy our flour from Zorblax.", "Call me in the morning, please."]
WAIT_S = 120.0  # generous: only a hang fails on it


@pytest.mark.parametrize("int8", [True, False], ids=["int8-activations", "float-activations"])
@pytest.mark.parametrize("preset", list(OnnxPreset))
def test_a_preset_announces_what_its_load_finds_and_embeds_the_same(
    preset: OnnxPreset, int8: bool
) -> None:
    files = OnnxModelFiles.preset(preset)
    eager = OnnxEmbedder(files, int8_activations=int8, cached_vectors=0)
    background = OnnxEmbedder(
        files, int8_activations=int8, cached_vectors=0, load_in_background=True
    )
    assert (background.dimension, background.model_id) == (eager.dimension, eager.model_id)
    assert np.array_equal(background.embed_sync(TEXTS), eager.embed_sync(TEXTS))
    assert background.loaded


async def test_a_call_to_embed_waits_for_a_load_still_under_way(tmp_path: Path) -> None:
    files = OnnxModelFiles.preset(DEFAULT_PRESET)
    expected = OnnxEmbedder(files, cached_vectors=0).embed_sync(TEXTS)
    # The process's model cache is locked while a load runs: holding it holds this load back.
    with onnx_embedder._CACHE_LOCK:
        embedder = OnnxEmbedder(
            files, cache_dir=tmp_path / "graphs", cached_vectors=0, load_in_background=True
        )
        assert embedder.dimension == expected.shape[1]  # known before the load
        found: list[np.ndarray] = []
        caller = threading.Thread(target=lambda: found.append(embedder.embed_sync(TEXTS)))
        caller.start()
        caller.join(timeout=0.2)
        assert caller.is_alive()  # it cannot finish: the load has not started
        assert not embedder.loaded
    caller.join(timeout=WAIT_S)
    assert not caller.is_alive()
    assert np.array_equal(found[0], expected)
    assert np.array_equal(await embedder.embed(TEXTS), expected)


def test_a_failed_load_is_the_error_of_every_call_to_embed() -> None:
    tampered = dataclasses.replace(OnnxModelFiles.preset(DEFAULT_PRESET), tokenizer_sha256="0" * 64)
    embedder = OnnxEmbedder(tampered, load_in_background=True)  # the load fails on its thread
    for _ in range(2):
        with pytest.raises(ModelUnavailableError) as raised:
            embedder.embed_sync(TEXTS)
        assert isinstance(raised.value.__cause__, ModelIntegrityError)
    assert embedder.loaded


def test_a_load_that_failed_on_a_missing_file_heals_once_the_file_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = OnnxModelFiles.preset(DEFAULT_PRESET)
    copy = tmp_path / "model.onnx"
    files = dataclasses.replace(preset, model=copy)  # the packaged model, not there yet
    monkeypatch.setattr(deferred_load, "RETRY_AFTER_S", 0.0)  # the next waiter loads again
    embedder = OnnxEmbedder(files, cache_dir=tmp_path / "graphs", load_in_background=True)
    with pytest.raises(ModelUnavailableError) as raised:
        embedder.embed_sync(TEXTS)
    assert "missing model file" in str(raised.value.__cause__)
    shutil.copy(preset.model, copy)
    expected = OnnxEmbedder(preset, cached_vectors=0).embed_sync(TEXTS)
    assert np.array_equal(embedder.embed_sync(TEXTS), expected)


def test_a_model_of_ones_own_loads_before_the_constructor_returns(tmp_path: Path) -> None:
    # Only its load can tell its dimension and whether it multiplies in int8.
    preset = OnnxModelFiles.preset(DEFAULT_PRESET)
    shutil.copy(preset.model, tmp_path / "model.onnx")
    shutil.copy(preset.tokenizer, tmp_path / "tokenizer.json")
    embedder = OnnxEmbedder(OnnxModelFiles.from_directory(tmp_path), load_in_background=True)
    assert embedder.loaded
    assert embedder.model_id.startswith("onnx:")


def test_a_deferred_load_starts_when_the_process_is_ready(tmp_path: Path) -> None:
    files = OnnxModelFiles.preset(DEFAULT_PRESET)
    embedder = OnnxEmbedder(files, cache_dir=tmp_path / "graphs", load_in_background=True)
    assert not embedder.loaded  # nothing has asked for it yet
    start_deferred_loads()  # what a served process does once ready
    deadline = time.monotonic() + WAIT_S
    while not embedder.loaded:  # loads with no call to embed
        assert time.monotonic() < deadline, "the load never finished"
        time.sleep(0.01)
    assert embedder.embed_sync(TEXTS).shape == (2, embedder.dimension)


def test_finishing_the_deferred_loads_waits_for_every_one(tmp_path: Path) -> None:
    files = OnnxModelFiles.preset(DEFAULT_PRESET)
    embedders = [
        OnnxEmbedder(files, cache_dir=tmp_path / f"graphs-{n}", load_in_background=True)
        for n in range(2)
    ]
    assert not any(e.loaded for e in embedders)
    finish_deferred_loads()
    assert all(e.loaded for e in embedders)
