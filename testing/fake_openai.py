"""A local OpenAI-compatible server for tests: `/v1/chat/completions` and `/v1/embeddings`.

- An ASGI app (`httpx.ASGITransport(app=fake)`) and an async `httpx.MockTransport` handler
  over the same code, so clients run their real request and response code.
- Chat answers are scripted: each queued reply (or the `responder`) gives the assistant's
  content for the next request; with nothing queued the model "finds" no facts.
- Embeddings are deterministic (`HashingEmbedder`), rows listed in reverse order to catch
  clients that ignore `index`.
- Faults: queued HTTP statuses, a delay (for timeouts), a truncated or refused answer.
- `rule_model` is a responder that answers like a careful model (the rule extractor's facts).
- Every request body is kept in `requests` for assertions.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.application.memory.extraction import ExtractionRequest, KnownFact
from factledger.domain.transcript import Message, Role

Responder = Callable[[dict[str, Any]], str]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def facts_reply(*facts: dict[str, Any]) -> str:
    """The assistant content a well-behaved model returns: the schema's JSON, all fields set."""
    defaults: dict[str, Any] = {
        "slot": None,
        "relation": None,
        "related_to": [],
        "is_inference": False,
        "condition": None,
        "valid_from": None,
        "value": None,
        "negated": False,
    }
    return json.dumps(
        {"facts": [{"key": f"k{i}", **defaults, **fact} for i, fact in enumerate(facts)]}
    )


@dataclass
class FakeOpenAI:
    api_key: str | None = "test-key"
    embedding_dimension: int = 64
    replies: list[str] = field(default_factory=list)
    responder: Responder | None = None
    failures: list[int] = field(default_factory=list)  # statuses to answer next, in order
    delay_s: float = 0.0
    finish_reason: str = "stop"
    refusal: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._embedder = HashingEmbedder(self.embedding_dimension)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)

    async def handler(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        status, payload = await self.answer(
            request.method, request.url.path, request.headers.get("authorization"), body
        )
        return httpx.Response(status, json=payload)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        status, payload = await self.answer(
            scope["method"], scope["path"], headers.get("authorization"), body
        )
        raw = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": raw})

    async def answer(
        self, method: str, path: str, authorization: str | None, raw: bytes
    ) -> tuple[int, dict[str, Any]]:
        if method != "POST" or not path.endswith(("/chat/completions", "/embeddings")):
            return 404, _error("not found")
        if self.api_key and authorization != f"Bearer {self.api_key}":
            return 401, _error("invalid api key")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return 400, _error("body is not JSON")
        self.requests.append(body)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.failures:
            return self.failures.pop(0), _error("scripted failure")
        if path.endswith("/embeddings"):
            return 200, self._embeddings(body)
        return 200, self._chat(body)

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.responder is not None:
            content = self.responder(body)
        else:
            content = self.replies.pop(0) if self.replies else facts_reply()
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if self.refusal is not None:
            message = {"role": "assistant", "content": None, "refusal": self.refusal}
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = self._embedder.embed_sync([str(t) for t in texts])
        data = [
            {"object": "embedding", "index": i, "embedding": vectors[i].tolist()}
            for i in reversed(range(len(texts)))
        ]
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "fake"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def rule_model(body: dict[str, Any]) -> str:
    """A `responder` that answers like a careful model would: it reads the transcript the
    extractor sent and returns what the `RuleExtractor` finds, in the schema's JSON. Lets a
    test score the whole LLM path (prompt, schema, parsing, guards) without a model."""
    sent = json.loads(body["messages"][-1]["content"])
    transcript = [
        Message(Role(m["role"]), m["text"], datetime.fromisoformat(m["at"]) if m["at"] else None)
        for m in sent["messages"]
    ]
    known = [KnownFact(k["id"], k["text"], k["slot"]) for k in sent["known_facts"]]
    request = ExtractionRequest(transcript, datetime.fromisoformat(sent["interaction_date"]), known)
    facts = RuleExtractor().extract_now(request)  # the packaged guidance is parsed once
    return json.dumps(
        {
            "facts": [
                {
                    "key": f.key,
                    "text": f.text,
                    "slot": f.slot,
                    "source_indexes": list(f.source_indexes),
                    "relation": f.relation.value if f.relation else None,
                    "related_to": list(f.related_to),
                    "is_inference": f.is_inference,
                    "condition": f.condition,
                    "valid_from": f.valid_from.isoformat() if f.valid_from else None,
                    "value": f.value,
                    "negated": f.negated,
                }
                for f in facts
            ]
        }
    )
