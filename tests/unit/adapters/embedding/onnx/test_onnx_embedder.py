"""The default ONNX embedder: pinned files, semantic similarity, batching, normalisation."""

from __future__ import annotations

import importlib.metadata
import shutil
from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    ModelIntegrityError,
    OnnxModelFiles,
    OnnxPreset,
)


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder()


async def test_the_default_model_gives_384_unit_vectors(embedder: OnnxEmbedder) -> None:
    vectors = await embedder.embed(["The cat sits on the mat", "Quarterly tax deadline"])

    assert embedder.dimension == 384
    assert embedder.model_id == "all-MiniLM-L6-v2-onnx-int8+int8-activations"
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_paraphrases_score_above_unrelated_sentences(embedder: OnnxEmbedder) -> None:
    triples = [
        (
            "We switched to a new packaging supplier",
            "They changed their box vendor",
            "The football match ended in a draw",
        ),
        (
            "My daughter starts school in September",
            "Her child begins classes in the autumn",
            "The server needs more memory",
        ),
        (
            "I am allergic to peanuts",
            "Nuts give me a bad reaction",
            "Our budget for the warehouse is 40k",
        ),
    ]
    for anchor, similar, unrelated in triples:
        a, s, u = await embedder.embed([anchor, similar, unrelated])
        assert float(a @ s) > float(a @ u) + 0.2


async def test_a_texts_vector_does_not_depend_on_its_neighbours(embedder: OnnxEmbedder) -> None:
    texts = [f"sentence number {n} about {'coffee ' * (n % 7)}" for n in range(70)]

    batched = await embedder.embed(texts)
    single = np.vstack([await embedder.embed([t]) for t in texts[:5]])
    among_long_texts = await embedder.embed(["word " * 200, texts[0]])

    assert batched.shape == (70, 384)
    assert np.array_equal(batched[:5], single)
    assert np.array_equal(among_long_texts[1], single[0])


async def test_float_activations_batch_and_stay_close_to_int8_ones(
    embedder: OnnxEmbedder,
) -> None:
    floats = OnnxEmbedder(int8_activations=False)
    texts = [
        "what does the customer prefer for delivery on weekdays",
        "We switched to a new packaging supplier last spring",
        "allergies",
        "The invoice for the warehouse lease is due on the first of each month",
    ]

    float_vectors = await floats.embed(texts)
    int8_vectors = await embedder.embed(texts)
    alone = np.vstack([await floats.embed([t]) for t in texts])

    assert floats.model_id == "all-MiniLM-L6-v2-onnx-int8"
    assert np.allclose(float_vectors, alone, atol=1e-4)
    assert (float_vectors * int8_vectors).sum(axis=1).min() > 0.98


async def test_long_texts_are_truncated_not_rejected(embedder: OnnxEmbedder) -> None:
    vectors = await embedder.embed(["word " * 2_000])

    assert vectors.shape == (1, 384)
    assert np.isfinite(vectors).all()


async def test_an_empty_list_embeds_to_no_rows(embedder: OnnxEmbedder) -> None:
    assert (await embedder.embed([])).shape == (0, 384)


def test_a_model_file_with_another_sha256_is_refused(tmp_path: Path) -> None:
    default = OnnxModelFiles.preset(DEFAULT_PRESET)
    shutil.copy(default.tokenizer, tmp_path / "tokenizer.json")
    (tmp_path / "model.onnx").write_bytes(b"not the pinned model")

    with pytest.raises(ModelIntegrityError):
        OnnxEmbedder(OnnxModelFiles.from_directory(tmp_path, model_sha256=default.model_sha256))


def test_a_directory_without_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelIntegrityError):
        OnnxEmbedder(OnnxModelFiles.from_directory(tmp_path))


async def test_a_user_model_directory_loads(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    default = OnnxModelFiles.preset(DEFAULT_PRESET)
    shutil.copy(default.model, tmp_path / "model.onnx")
    shutil.copy(default.tokenizer, tmp_path / "tokenizer.json")

    own = OnnxEmbedder(OnnxModelFiles.from_directory(tmp_path))
    text = ["Supplier B delivers on Sundays"]

    assert own.model_id == f"onnx:{tmp_path.name}+int8-activations"
    assert np.allclose(await own.embed(text), await embedder.embed(text), atol=1e-6)


async def test_the_l3_preset_loads_from_its_package_and_understands_paraphrases() -> None:
    l3 = OnnxEmbedder(OnnxModelFiles.preset(OnnxPreset.PARAPHRASE_MINILM_L3))
    anchor, similar, unrelated = await l3.embed(
        ["I am allergic to peanuts", "Nuts give me a bad reaction", "Our budget is 40k"]
    )

    assert l3.model_id == "paraphrase-MiniLM-L3-v2-onnx+int8-activations"
    assert l3.dimension == 384
    assert float(anchor @ similar) > float(anchor @ unrelated) + 0.2


def test_a_preset_whose_package_is_missing_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", not_installed)

    with pytest.raises(ModelIntegrityError, match="not installed"):
        OnnxModelFiles.preset(OnnxPreset.PARAPHRASE_MINILM_L3)
