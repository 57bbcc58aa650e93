"""`build_embedder` turns each embedder setting into a working embedder."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.api.bootstrap.backend import build_embedder
from factledger.api.settings import SettingsError, load_settings
from factledger.testing.fake_openai_embeddings import FakeOpenAIEmbeddings


async def test_the_default_is_the_onnx_embedder() -> None:
    async with httpx.AsyncClient() as http:
        embedder = build_embedder(load_settings().embedder, http)

    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.dimension == 384


async def test_hashing_is_chosen_by_kind() -> None:
    settings = load_settings(embedder={"kind": "hashing", "dimension": 64})

    async with httpx.AsyncClient() as http:
        embedder = build_embedder(settings.embedder, http)

    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dimension == 64


async def test_an_openai_compatible_endpoint_is_used_through_the_shared_client() -> None:
    fake = FakeOpenAIEmbeddings(dimension=32, api_key="k-123")
    settings = load_settings(
        embedder={
            "kind": "openai_compatible",
            "base_url": "http://embeddings.test/v1",
            "model": "m",
            "dimension": 32,
            "api_key": "k-123",
        }
    )

    async with httpx.AsyncClient(transport=fake.transport()) as http:
        vectors = await build_embedder(settings.embedder, http).embed(["hello world"])

    assert vectors.shape == (1, 32)
    assert np.isclose(float(np.linalg.norm(vectors[0])), 1.0)
    assert len(fake.requests) == 1


async def test_the_packaged_model_and_activations_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_EMBEDDER__MODEL", "paraphrase-MiniLM-L3-v2")
    monkeypatch.setenv("FACTLEDGER_EMBEDDER__INT8_ACTIVATIONS", "false")

    async with httpx.AsyncClient() as http:
        embedder = build_embedder(load_settings().embedder, http)

    assert embedder.model_id == "paraphrase-MiniLM-L3-v2-onnx"


def test_an_unknown_model_is_refused_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_EMBEDDER__MODEL", "no-such-model")

    with pytest.raises(SettingsError, match=r"embedder\.onnx\.model"):
        load_settings()
