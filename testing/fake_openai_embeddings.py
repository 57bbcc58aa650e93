"""A tiny OpenAI-compatible `/v1/embeddings` server for `httpx.MockTransport`.

Answers like the real API (`{"object": "list", "data": [{"index", "embedding"}], ...}`) with
vectors from the deterministic `HashingEmbedder`, lists rows in reverse order to catch
clients that ignore `index`, and can be told to fail the next requests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx

from factledger.adapters.embedding.hashing import HashingEmbedder


@dataclass
class FakeOpenAIEmbeddings:
    dimension: int = 64
    api_key: str | None = "test-key"
    requests: list[dict[str, object]] = field(default_factory=list)
    failures: list[int] = field(default_factory=list)  # statuses to answer next, in order
    scale: float = 3.0  # real servers do not always normalise; the client must

    def __post_init__(self) -> None:
        self._embedder = HashingEmbedder(self.dimension)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)

    def handler(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/v1/embeddings"):
            return httpx.Response(404, json={"error": {"message": "not found"}})
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return httpx.Response(401, json={"error": {"message": "bad key"}})
        body = json.loads(request.content)
        self.requests.append(body)
        if self.failures:
            return httpx.Response(self.failures.pop(0), json={"error": {"message": "boom"}})
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = self._embedder.embed_sync(texts) * self.scale
        data = [
            {"object": "embedding", "index": i, "embedding": vectors[i].tolist()}
            for i in reversed(range(len(texts)))
        ]
        return httpx.Response(
            200,
            json={
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            },
        )
