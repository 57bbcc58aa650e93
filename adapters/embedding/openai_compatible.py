"""`OpenAICompatibleEmbedder`: any `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp).

For users who prefer a hosted or self-served model to the bundled ONNX one. httpx errors never
cross the port: they become `EmbeddingUnavailableError` or `EmbeddingTimeoutError`, with the
driver exception kept as `__cause__` (never copied into the message).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
import structlog

from factledger.application.errors import MemoryTimeoutError, MemoryUnavailableError
from factledger.application.memory.ports import Vectors

log = structlog.get_logger(__name__)
_RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504})


class EmbeddingUnavailableError(MemoryUnavailableError):
    """The embeddings endpoint refused, failed or answered with something unusable."""


class EmbeddingTimeoutError(MemoryTimeoutError):
    """The embeddings endpoint did not answer in time."""


class OpenAICompatibleEmbedder:
    """Embeds through an OpenAI-compatible HTTP API on a caller-owned `httpx.AsyncClient`.

    - `base_url` ends before `/embeddings` (e.g. `http://localhost:11434/v1`).
    - Sends at most `batch_size` texts per request; rows come back in input order whatever
      order the server lists them in, and are L2-normalised (not every server does).
    - Retries 429 and 5xx answers `max_retries` times with exponential backoff.
    - A vector of the wrong width is an error, never silently padded or cut.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base_url: str,
        model: str,
        dimension: int,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        backoff_s: float = 0.5,
    ) -> None:
        self._client = client
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._batch_size = batch_size
        self._timeout = timeout_s
        self._max_retries = max_retries
        self._backoff = backoff_s
        self.dimension = dimension
        self.model_id = f"openai-compatible:{model}"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            await self._embed_batch(list(texts[i : i + self._batch_size]))
            for i in range(0, len(texts), self._batch_size)
        ]
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        started = time.perf_counter()
        body = {"model": self._model, "input": texts, "encoding_format": "float"}
        response = await self._post(body)
        vectors = self._parse(response, len(texts))
        log.debug(
            "embedding.batch_embedded",
            texts=len(texts),
            duration_ms=round((time.perf_counter() - started) * 1e3, 2),
        )
        return vectors

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = await self._client.post(
                    self._url, json=body, headers=self._headers, timeout=self._timeout
                )
            except httpx.TimeoutException as exc:
                raise EmbeddingTimeoutError("embeddings endpoint timed out") from exc
            except httpx.HTTPError as exc:
                raise EmbeddingUnavailableError("embeddings endpoint unreachable") from exc
            if response.status_code < 400:
                return response
            if response.status_code not in _RETRYABLE or attempt >= self._max_retries:
                log.warning(
                    "embedding.request_failed", status=response.status_code, attempts=attempt + 1
                )
                raise EmbeddingUnavailableError(
                    f"embeddings endpoint answered {response.status_code}"
                )
            attempt += 1
            await asyncio.sleep(self._backoff * 2 ** (attempt - 1))

    def _parse(self, response: httpx.Response, count: int) -> Vectors:
        try:
            data = response.json()["data"]
            rows = sorted(data, key=lambda item: int(item["index"]))
            matrix = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingUnavailableError("embeddings response is malformed") from exc
        if matrix.shape != (count, self.dimension):
            raise EmbeddingUnavailableError(
                f"expected {count} vectors of {self.dimension} dimensions, got {matrix.shape}"
            )
        if not np.all(np.isfinite(matrix)):
            raise EmbeddingUnavailableError("embeddings response holds non-finite numbers")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        normalised: Vectors = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised
