"""The OpenAI-compatible embedder against a local fake endpoint (no network)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import numpy as np
import pytest
import structlog

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.openai_compatible import (
    EmbeddingTimeoutError,
    EmbeddingUnavailableError,
    OpenAICompatibleEmbedder,
)
from factledger.application.errors import MemoryUnavailableError
from factledger.testing.fake_openai_embeddings import FakeOpenAIEmbeddings

BASE_URL = "http://embeddings.test/v1"


@pytest.fixture
def fake() -> FakeOpenAIEmbeddings:
    return FakeOpenAIEmbeddings(dimension=64)


@pytest.fixture
async def client(fake: FakeOpenAIEmbeddings) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=fake.transport()) as client:
        yield client


def make(client: httpx.AsyncClient, **kwargs: object) -> OpenAICompatibleEmbedder:
    options: dict[str, object] = {
        "base_url": BASE_URL,
        "model": "text-embedding-test",
        "dimension": 64,
        "api_key": "test-key",
        "backoff_s": 0.0,
    }
    options.update(kwargs)
    return OpenAICompatibleEmbedder(client, **options)  # type: ignore[arg-type]


async def test_rows_come_back_in_input_order_and_normalised(
    client: httpx.AsyncClient, fake: FakeOpenAIEmbeddings
) -> None:
    texts = ["supplier b", "oat milk coffee", "warehouse budget"]

    vectors = await make(client).embed(texts)

    assert vectors.shape == (3, 64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert np.allclose(vectors, HashingEmbedder(64).embed_sync(texts), atol=1e-6)
    assert fake.requests == [
        {"model": "text-embedding-test", "input": texts, "encoding_format": "float"}
    ]


async def test_many_texts_are_sent_in_batches(
    client: httpx.AsyncClient, fake: FakeOpenAIEmbeddings
) -> None:
    vectors = await make(client, batch_size=4).embed([f"text {n}" for n in range(10)])

    assert vectors.shape == (10, 64)
    assert [len(r["input"]) for r in fake.requests] == [4, 4, 2]  # type: ignore[arg-type]


async def test_a_server_error_is_retried(
    client: httpx.AsyncClient, fake: FakeOpenAIEmbeddings
) -> None:
    fake.failures = [503, 429]

    vectors = await make(client, max_retries=2).embed(["hello"])

    assert vectors.shape == (1, 64)
    assert len(fake.requests) == 3


async def test_persistent_failure_becomes_the_port_error(
    client: httpx.AsyncClient, fake: FakeOpenAIEmbeddings
) -> None:
    fake.failures = [500, 500, 500]

    with pytest.raises(MemoryUnavailableError):
        await make(client, max_retries=1).embed(["hello"])


async def test_a_bad_key_is_not_retried(client: httpx.AsyncClient) -> None:
    with pytest.raises(EmbeddingUnavailableError, match="401"):
        await make(client, api_key="wrong").embed(["hello"])


async def test_a_vector_of_the_wrong_width_is_an_error(client: httpx.AsyncClient) -> None:
    with pytest.raises(EmbeddingUnavailableError, match="dimensions"):
        await make(client, dimension=32).embed(["hello"])


async def test_a_malformed_body_is_an_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"unexpected": True})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(EmbeddingUnavailableError):
            await make(client).embed(["hello"])


async def test_a_timeout_becomes_the_port_timeout() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(EmbeddingTimeoutError) as caught:
            await make(client).embed(["hello"])

    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)


async def test_errors_and_logs_carry_no_text_or_key(client: httpx.AsyncClient) -> None:
    secret = "my sister's diagnosis"
    with structlog.testing.capture_logs() as logs, pytest.raises(EmbeddingUnavailableError) as e:
        await make(client, api_key="wrong-secret-key").embed([secret])

    assert secret not in repr(logs)
    assert secret not in str(e.value)
    assert "wrong-secret-key" not in repr(logs)
    assert "wrong-secret-key" not in str(e.value)
