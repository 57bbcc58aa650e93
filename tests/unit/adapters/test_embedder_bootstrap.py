"""`build_embedder` turns each embedder setting into a working embedder."""

from __future__ import annotations

import httpx
import numpy as np

from factledger.adapters.hashing_embedder import HashingEmbedder
from factledger.adapters.onnx_embedder import OnnxEmbedder
from factledger.api.bootstrap import build_embedder
from factledger.api.settings import load_settings
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
